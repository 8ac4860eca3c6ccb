/*
 * warplens' Java binding: name the GPU work a JVM program does so the warplens profile (and its
 * JFR export, opened in JDK Mission Control) shows it. Calls go through JNI to libwarplens (the C
 * API of include/warplens/warplens.h). Under `warplens run -- java ...` the native library is
 * found through WARPLENS_JNI, which `warplens run` sets; otherwise through the system property
 * warplens.jni or java.library.path. Without it, or when the program is not run under `warplens
 * run`, every call returns at once and does nothing.
 *
 *   Warplens.threadName("loader");
 *   try (Warplens.Scope s = Warplens.scope("inference-batch")) {
 *       Warplens.annotateNextLaunch(2.0 * m * n * k, bytes, Warplens.Precision.FP32);
 *       ...launch kernels (JCuda, Panama, a native library)...
 *   }
 *   ExecutorService pool = Executors.newThreadPerTaskExecutor(Warplens.gpuThreads("attention"));
 */
package dev.warplens;

import java.lang.reflect.Method;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

public final class Warplens {
    private Warplens() {}

    /** Which compute peak throughput is compared with (warplens.h's enum warplens_precision). */
    public enum Precision { FP32, FP64, FP16_TENSOR, BF16_TENSOR }

    private static final boolean NATIVE = load();

    private static boolean load() {
        String path = System.getenv("WARPLENS_JNI");
        if (path == null || path.isEmpty())
            path = System.getProperty("warplens.jni");
        try {
            if (path != null && !path.isEmpty())
                System.load(path);
            else
                System.loadLibrary("warplens_jni");
            return true;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return false; /* not profiled: every call is a no-op */
        }
    }

    private static native long nativeScopeBegin(String name, long appThreadId);
    private static native long nativeScopeEnd();
    private static native void nativeThreadName(String name);
    private static native void nativeAnnotateNextLaunch(double flops, double bytes, int precision);
    private static native boolean nativeIsRecording();
    private static native void nativeSetTier(String tier);

    /** A warplens scope; close it on the thread that opened it (try-with-resources does). */
    public static final class Scope implements AutoCloseable {
        private final long id;
        private boolean open;

        private Scope(long id, boolean open) {
            this.id = id;
            this.open = open;
        }

        /** The scope's id in the profile (0 when nothing is recording). */
        public long id() { return id; }

        @Override
        public void close() {
            if (open) {
                open = false;
                nativeScopeEnd();
            }
        }
    }

    private static final Scope NO_SCOPE = new Scope(0, false);

    /**
     * Opens a scope on the calling thread: the kernels it launches until the scope closes carry
     * the scope's name, and the calling Java thread's id as their virtualThreadId (a virtual
     * thread's own id when called from one).
     */
    @SuppressWarnings("deprecation") /* Thread.getId(): threadId() is Java 19+ */
    public static Scope scope(String name) {
        if (!NATIVE)
            return NO_SCOPE;
        long id = nativeScopeBegin(name == null ? "" : name, Thread.currentThread().getId());
        return id != 0 ? new Scope(id, true) : NO_SCOPE;
    }

    /** Names the calling thread's OS thread in the profile (overrides /proc's 15-byte name). */
    public static void threadName(String name) {
        if (NATIVE && name != null)
            nativeThreadName(name);
    }

    /**
     * The next kernel this thread launches did {@code flops} floating-point operations and moved
     * {@code bytes} bytes of device memory (0 = unknown): its TFLOP/s and GB/s in the profile.
     */
    public static void annotateNextLaunch(double flops, double bytes, Precision precision) {
        if (NATIVE)
            nativeAnnotateNextLaunch(flops, bytes, (precision == null ? Precision.FP32 : precision).ordinal());
    }

    /** true when warplens records this process. */
    public static boolean isRecording() { return NATIVE && nativeIsRecording(); }

    /** The tier of the kernels this thread launches from now on; null goes back to the process's. */
    public static void setTier(String tier) {
        if (NATIVE)
            nativeSetTier(tier);
    }

    private static String sanitize(String scope) {
        String s = scope == null || scope.isEmpty() ? "unnamed" : scope;
        StringBuilder b = new StringBuilder(s.length());
        for (char c : s.toCharArray())
            b.append(Character.isLetterOrDigit(c) || c == '-' || c == '_' || c == '.' ? c : '-');
        return b.toString();
    }

    /** The prefix of the threads {@link #gpuThreads} names: warpforge-gpu-&lt;scope&gt;-task-. */
    public static String gpuThreadPrefix(String scope) { return "warpforge-gpu-" + sanitize(scope) + "-task-"; }

    /**
     * A ThreadFactory whose threads are named warpforge-gpu-&lt;scope&gt;-task-&lt;n&gt; (n from 0), so
     * JMC groups their events by task. On Java 21 and later they are virtual threads; on 17 named
     * platform threads, which also name their OS thread in the profile.
     */
    public static ThreadFactory gpuThreads(String scope) {
        String prefix = gpuThreadPrefix(scope);
        ThreadFactory virtual = virtualFactory(prefix);
        if (virtual != null)
            return virtual;
        AtomicLong next = new AtomicLong();
        return task -> {
            String name = prefix + next.getAndIncrement();
            return new Thread(() -> {
                threadName(name);
                task.run();
            }, name);
        };
    }

    /** Thread.ofVirtual().name(prefix, 0).factory() where the JDK has it (21+), else null. */
    private static ThreadFactory virtualFactory(String prefix) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Class<?> api = Class.forName("java.lang.Thread$Builder");
            builder = api.getMethod("name", String.class, long.class).invoke(builder, prefix, 0L);
            return (ThreadFactory) api.getMethod("factory").invoke(builder);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null; /* Java 17: no virtual threads */
        }
    }

    /** Whether t is a virtual thread (false on Java 17, which has none). */
    public static boolean isVirtual(Thread t) {
        try {
            Method m = Thread.class.getMethod("isVirtual");
            return (Boolean) m.invoke(t);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }
}
