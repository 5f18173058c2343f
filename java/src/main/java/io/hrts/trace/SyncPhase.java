package io.hrts.trace;

/** When in the run a sync round with the master was taken. */
public enum SyncPhase {
    /** At the start of the run. */
    START,
    /** During the run. */
    PERIODIC,
    /** At the end of the run. */
    END;

    int code() {
        return ordinal();
    }
}
