package io.hrts;

import java.io.PrintStream;
import java.time.Instant;

/**
 * {@code java -jar hrts.jar}: loads the native library and prints a few time stamps, the OS
 * process id and the OS thread id. Exit status 0 when all is well, 1 on a failure, 2 on bad
 * arguments.
 */
public final class SelfTest {
    private SelfTest() {}

    static void usage(PrintStream out) {
        out.println("usage: java -jar hrts-" + NativeLoader.version() + ".jar [--help]");
        out.println();
        out.println("Loads the hrts native library and prints a few time stamps (nanoseconds");
        out.println("since the Unix epoch), the OS process id and the OS thread id.");
        out.println();
        out.println("System properties:");
        out.println("  -D" + NativeLoader.LIBRARY_PROPERTY + "=FILE  load this libhrts_jni.so");
        out.println("  -D" + NativeLoader.DIR_PROPERTY
                + "=DIR      extract the packed library here (default: under java.io.tmpdir)");
    }

    public static void main(String[] args) {
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                usage(System.out);
                System.exit(0);
            }
        }
        if (args.length > 0) {
            System.err.println("hrts self-test: unexpected argument: " + args[0]);
            usage(System.err);
            System.exit(2);
        }
        System.exit(run(System.out));
    }

    static int run(PrintStream out) {
        out.println("hrts " + NativeLoader.version() + " self-test");
        String from;
        try {
            from = NativeLoader.load();
        } catch (HrtsException e) {
            System.err.println(e.getMessage());
            return 1;
        }
        out.println("platform:       " + NativeLoader.platform());
        out.println("native library: " + from);
        int failures = 0;
        long pid = HighResTimestamp.getOSProcessID();
        long javaPid = ProcessHandle.current().pid();
        out.println("OS process id:  " + pid + (pid == javaPid ? "" : "  MISMATCH: Java says " + javaPid));
        if (pid != javaPid) {
            failures++;
        }
        out.println("OS thread id:   " + HighResTimestamp.getOSThreadID());
        for (int i = 0; i < 5; i++) {
            long ns = HighResTimestamp.getEpochNanoseconds();
            Instant t = Instant.ofEpochSecond(ns / 1_000_000_000L, ns % 1_000_000_000L);
            out.println("stamp:          " + ns + " ns  (" + t + ")");
        }
        long ms = System.currentTimeMillis();
        long ns = HighResTimestamp.getEpochNanoseconds();
        long diffMs = Math.abs(ns / 1_000_000L - ms);
        if (diffMs > 1000) {
            out.println("stamp differs from System.currentTimeMillis() by " + diffMs + " ms");
            failures++;
        }
        out.println(failures == 0 ? "self-test: OK" : "self-test: FAILED (" + failures + ")");
        return failures == 0 ? 0 : 1;
    }
}
