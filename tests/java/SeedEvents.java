/* The event classes warplens' JFR events must match: field names, Java types, labels and units
 * of the GpuKernelEvent and GpuOccupancyEvent this product was designed from. JfrCheck asks the
 * JDK for these classes' EventType and compares it with the types in a recording, so the contract
 * is checked the way a Java reader of those events sees it. (Descriptions are warplens' own and
 * not compared.) */
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;

final class SeedEvents {
    private SeedEvents() {}

    @Name("warplens.GpuKernelEvent")
    @Label("GPU Kernel Execution")
    @Category({"warplens", "GPU"})
    static final class Kernel extends Event {
        @Label("Operation") String operation;
        @Label("Shape") String shape;
        @Label("GPU Time") @Timespan(Timespan.MICROSECONDS) long gpuTimeMicros;
        @Label("Launch Latency") @Timespan(Timespan.NANOSECONDS) long launchLatencyNanos;
        @Label("Queue Delay") @Timespan(Timespan.NANOSECONDS) long queueDelayNanos;
        @Label("Throughput (TFLOPS)") double teraflops;
        @Label("Backend") String backend;
        @Label("Tier") String tier;
        @Label("Device Index") int deviceIndex;
        @Label("Bytes Transferred") @DataAmount long bytesTransferred;
        @Label("Memory Bandwidth (GB/s)") double memoryBandwidthGBps;
        @Label("Grid Dim X") int gridDimX;
        @Label("Grid Dim Y") int gridDimY;
        @Label("Grid Dim Z") int gridDimZ;
        @Label("Block Dim X") int blockDimX;
        @Label("Block Dim Y") int blockDimY;
        @Label("Block Dim Z") int blockDimZ;
        @Label("Total Threads") long totalThreads;
        @Label("Total Warps") long totalWarps;
        @Label("Total Blocks") int totalBlocks;
        @Label("Registers Per Thread") int registersPerThread;
        @Label("Static Shared Memory") @DataAmount int staticSharedMemoryBytes;
        @Label("Dynamic Shared Memory") @DataAmount int dynamicSharedMemoryBytes;
        @Label("Local Memory Per Thread") @DataAmount int localMemoryPerThread;
        @Label("Theoretical Occupancy %") int theoreticalOccupancyPercent;
        @Label("Max Active Blocks Per SM") int maxActiveBlocksPerSM;
        @Label("Estimated Active SMs") int estimatedActiveSMs;
        @Label("Estimated Active Warps") long estimatedActiveWarps;
        @Label("Occupancy Limiting Factor") String occupancyLimitingFactor;
        @Label("Stream ID") long streamId;
        @Label("Stream Priority") int streamPriority;
        @Label("Concurrent Kernels") int concurrentKernels;
        @Label("Virtual Thread ID") long virtualThreadId;
        @Label("Scope ID") long scopeId;
        @Label("Scope Name") String scopeName;
    }

    @Name("warplens.GpuOccupancyEvent")
    @Label("GPU Occupancy Snapshot")
    @Category({"warplens", "GPU"})
    static final class Occupancy extends Event {
        @Label("Device Index") int deviceIndex;
        @Label("Active Streams") int activeStreams;
        @Label("Active Kernels") int activeKernels;
        @Label("Estimated Total Occupancy %") int estimatedTotalOccupancyPercent;
        @Label("NVML GPU Utilization %") int nvmlGpuUtilization;
        @Label("NVML Memory Utilization %") int nvmlMemoryUtilization;
        @Label("Active Warps Estimate") long activeWarpsEstimate;
        @Label("SM Count") int smCount;
        @Label("Max Warps Per SM") int maxWarpsPerSM;
    }
}
