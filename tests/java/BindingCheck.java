/* A JVM program using the Java binding as an application would (tests/cli/test_java_cli.sh):
 * thread name, nested scopes, an annotation, a tier, and tasks on warplens' GPU thread factory.
 * It prints what it saw, so the test can compare with what reached the recorder's bridge. */
import dev.warplens.Warplens;

import java.util.concurrent.ThreadFactory;

public final class BindingCheck {
    @SuppressWarnings("deprecation") /* Thread.getId(): threadId() is Java 19+ */
    public static void main(String[] args) throws Exception {
        System.out.println("recording " + Warplens.isRecording());
        System.out.println("main-thread " + Thread.currentThread().getId());
        Warplens.threadName("loader");
        try (Warplens.Scope s = Warplens.scope("batch-1")) {
            System.out.println("scope " + (s.id() != 0));
            Warplens.annotateNextLaunch(2e9, 1e6, Warplens.Precision.BF16_TENSOR);
            Warplens.setTier("PRODUCTION");
            try (Warplens.Scope inner = Warplens.scope("inner")) {
                inner.close(); /* closing twice ends the scope once */
            }
        }
        Warplens.setTier(null);
        ThreadFactory f = Warplens.gpuThreads("infer batch");
        for (int i = 0; i < 2; i++) {
            Thread t = f.newThread(() -> {
                try (Warplens.Scope task = Warplens.scope("task")) {
                    System.out.println("in " + Thread.currentThread().getName() + " id " + Thread.currentThread().getId());
                }
            });
            t.start();
            t.join();
            System.out.println("thread " + t.getName() + " virtual " + Warplens.isVirtual(t));
        }
        System.out.println("java " + Runtime.version().feature());
    }
}
