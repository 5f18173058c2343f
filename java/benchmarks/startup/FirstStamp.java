/**
 * One JVM's way to its first hrts stamp: prints the nanoseconds from main's start to the
 * stamp returned (library loaded from its extracted copy, segment attached).
 */
public class FirstStamp {
    public static void main(String[] args) {
        long t0 = System.nanoTime();
        long stamp = io.hrts.HighResTimestamp.getEpochNanoseconds();
        long t1 = System.nanoTime();
        // No string concatenation: javac would compile it to an invokedynamic whose bootstrap
        // costs this JVM several ms after the stamp, which PrintTime does not pay.
        System.out.print(t1 - t0);
        System.out.print(' ');
        System.out.println(stamp);
    }
}
