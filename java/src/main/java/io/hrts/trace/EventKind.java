package io.hrts.trace;

/** What a trace event marks. A {@link #SEND} and a {@link #RECEIVE} with the same id are one message. */
public enum EventKind {
    /** A point in time. */
    INSTANT,
    /** A span begins (ends at the next {@link #END} of the same name). */
    BEGIN,
    /** A span ends. */
    END,
    /** A message leaves; the event's id names the message. */
    SEND,
    /** The message with the event's id arrives. */
    RECEIVE;

    /** The code of the kind in trace files (its ordinal, fixed by the file format). */
    int code() {
        return ordinal();
    }
}
