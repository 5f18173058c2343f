package io.hrts;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Small programs the tests run in child JVMs (classpath: the jar plus the test classes). */
public final class TestMains {
    private TestMains() {}

    public static void main(String[] args) throws Exception {
        switch (args.length == 0 ? "" : args[0]) {
            case "echo":
                echo();
                return;
            case "open-twice":
                openTwice();
                return;
            case "next-sequence":
                nextSequence();
                return;
            default:
                System.err.println("usage: TestMains echo|open-twice|next-sequence");
                System.exit(2);
        }
    }

    /** For every stdin line print one ordered stamp: the Java side of `hrts_test drive`. */
    static void echo() throws Exception {
        HighResTimestamp.open(); // before the first line: opening is not part of a round
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        while (in.readLine() != null) {
            // Ordered: must not be read before the line arrived.
            out.println(HighResTimestamp.getEpochNanosecondsOrdered());
            out.flush();
        }
    }

    /** Two stamp attempts; prints each outcome ("ok" or the exception's kind and message). */
    static void openTwice() {
        for (int i = 0; i < 2; i++) {
            try {
                long ns = HighResTimestamp.getEpochNanoseconds();
                System.out.println("attempt " + i + ": ok " + ns);
            } catch (HrtsException e) {
                System.out.println("attempt " + i + ": HrtsException " + e.getKind() + ": " + e.getMessage());
            } catch (Throwable t) {
                System.out.println("attempt " + i + ": " + t);
            }
        }
    }

    /** One nextSequence() call; prints "ok N" or the exception's kind and message. */
    static void nextSequence() {
        HighResTimestamp.open();
        try {
            System.out.println("ok " + HighResTimestamp.nextSequence());
        } catch (HrtsException e) {
            System.out.println("HrtsException " + e.getKind() + ": " + e.getMessage());
        }
    }
}
