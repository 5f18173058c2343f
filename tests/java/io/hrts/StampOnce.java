package io.hrts;

/** A child JVM's whole use of hrts: one stamp, printed ({@link FirstStampTest}). */
public final class StampOnce {
    private StampOnce() {}

    public static void main(String[] args) {
        System.out.println(HighResTimestamp.getEpochNanoseconds());
    }
}
