/* Reads a JFR recording with the JDK's own consumer API (jdk.jfr.consumer.RecordingFile), as a
 * Java program would, and prints what the CLI test compares with the session:
 *   type NAME COUNT                 for every event type the recording declares
 *   contract NAME ok|FAIL: why      the recording's type against SeedEvents' class (names, Java
 *                                   types, labels, units, category)
 *   kernel <tab-separated fields>   one line per GpuKernelEvent, by kernel id (with --kernels)
 * Exits 1 when a contract fails or the file cannot be read. Strings are printed with \t, \n, \r
 * and \ escaped, null as "-". */
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import jdk.jfr.AnnotationElement;
import jdk.jfr.EventType;
import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public final class JfrCheck {
    static String esc(String s) {
        if (s == null)
            return "-";
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            switch (c) {
            case '\\' -> b.append("\\\\");
            case '\t' -> b.append("\\t");
            case '\n' -> b.append("\\n");
            case '\r' -> b.append("\\r");
            default -> b.append(c);
            }
        }
        return b.toString();
    }

    /* What a reader sees of a field: its Java type, label and unit annotations. */
    static String shape(ValueDescriptor v) {
        StringBuilder b = new StringBuilder(v.getTypeName() + " label=" + v.getLabel());
        for (AnnotationElement a : v.getAnnotationElements()) {
            String n = a.getTypeName();
            if (n.equals("jdk.jfr.Timespan") || n.equals("jdk.jfr.DataAmount") || n.equals("jdk.jfr.Percentage")
                    || n.equals("jdk.jfr.Timestamp"))
                b.append(" ").append(n.substring(8)).append("=").append(a.getValues());
        }
        return b.toString();
    }

    static String contract(EventType want, EventType got) {
        if (got == null)
            return "FAIL: not in the recording";
        if (!want.getCategoryNames().equals(got.getCategoryNames()))
            return "FAIL: category " + got.getCategoryNames() + ", want " + want.getCategoryNames();
        if (!want.getLabel().equals(got.getLabel()))
            return "FAIL: label " + got.getLabel() + ", want " + want.getLabel();
        for (String implicit : new String[] {"startTime", "duration", "eventThread"})
            if (got.getField(implicit) == null)
                return "FAIL: no field " + implicit;
        for (ValueDescriptor w : want.getFields()) {
            if (w.getName().equals("stackTrace"))
                continue; /* no host stacks are recorded: the field is left out, as @StackTrace(false) does */
            if (w.getName().equals("startTime") || w.getName().equals("duration") || w.getName().equals("eventThread"))
                continue;
            ValueDescriptor g = got.getField(w.getName());
            if (g == null)
                return "FAIL: no field " + w.getName();
            if (!shape(w).equals(shape(g)))
                return "FAIL: field " + w.getName() + " is " + shape(g) + ", want " + shape(w);
        }
        return "ok";
    }

    static long nanos(RecordedEvent e, String field) { return e.getDuration(field).toNanos(); }

    static String kernelLine(RecordedEvent e) {
        RecordedThread t = e.getThread();
        List<String> f = new ArrayList<>();
        f.add(Long.toString(e.getLong("kernelId")));
        for (String n : new String[] {"gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ",
                                      "registersPerThread", "staticSharedMemoryBytes", "dynamicSharedMemoryBytes",
                                      "localMemoryPerThread", "deviceIndex", "theoreticalOccupancyPercent"})
            f.add(Integer.toString(e.getInt(n)));
        for (String n : new String[] {"streamId", "correlationId", "scopeId", "processId", "totalThreads"})
            f.add(Long.toString(e.getLong(n)));
        f.add(Long.toString(nanos(e, "queueDelayNanos")));
        f.add(Long.toString(nanos(e, "launchLatencyNanos")));
        f.add(Long.toString(nanos(e, "gpuTimeMicros")));
        f.add(Long.toString(e.getStartTime().getEpochSecond() * 1_000_000_000L + e.getStartTime().getNano()));
        f.add(Long.toString(e.getDuration().toNanos()));
        f.add(Boolean.toString(e.getBoolean("gpuTimestamps")));
        f.add(esc(t == null ? null : t.getOSName()));
        f.add(t == null ? "-" : Long.toString(t.getOSThreadId()));
        for (String n : new String[] {"scopeName", "kernelName", "operation", "shape", "backend", "tier"})
            f.add(esc(e.getString(n)));
        f.add(Long.toString(e.getLong("virtualThreadId")));
        return "kernel\t" + String.join("\t", f);
    }

    public static void main(String[] args) throws Exception {
        boolean kernels = args.length > 1 && args[1].equals("--kernels");
        Map<String, Long> counts = new TreeMap<>();
        Map<Long, String> lines = new TreeMap<>();
        Map<String, EventType> types = new TreeMap<>();
        try (RecordingFile rf = new RecordingFile(Path.of(args[0]))) {
            for (EventType t : rf.readEventTypes()) {
                types.put(t.getName(), t);
                counts.put(t.getName(), 0L);
            }
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                String name = e.getEventType().getName();
                counts.merge(name, 1L, Long::sum);
                if (kernels && name.equals("warplens.GpuKernelEvent"))
                    lines.put(e.getLong("kernelId"), kernelLine(e));
            }
        }
        for (Map.Entry<String, Long> c : counts.entrySet())
            System.out.println("type " + c.getKey() + " " + c.getValue());
        boolean ok = true;
        for (Class<? extends jdk.jfr.Event> seed : List.of(SeedEvents.Kernel.class, SeedEvents.Occupancy.class)) {
            EventType want = EventType.getEventType(seed);
            String verdict = contract(want, types.get(want.getName()));
            ok &= verdict.equals("ok");
            System.out.println("contract " + want.getName() + " " + verdict);
        }
        for (String l : lines.values())
            System.out.println(l);
        System.exit(ok ? 0 : 1);
    }
}
