package io.hrts.trace;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A trace file of this process for {@code hrts merge}: events with local Intel Trace Collector
 * stamps from this JVM's hrts segment, and sync rounds with a master ({@code hrts sync serve})
 * that let the merge put the events of several hosts on one timeline. The file format is the
 * one the Rust and C writers write (native/trace/FORMAT.md).
 *
 * <pre>{@code
 * try (TraceWriter w = TraceWriter.open(Paths.get("rank1.htr"), null, "rank 1")) {
 *     w.sync("10.0.0.1:7700", SyncPhase.START);
 *     w.event(EventKind.BEGIN, "compute");
 *     w.event(EventKind.END, "compute");
 *     w.sync("10.0.0.1:7700", SyncPhase.END);
 * }
 * }</pre>
 *
 * <p>On the portable implementation ({@link io.hrts.HighResTimestamp#implementation()}) the file
 * is written in Java, in the same format, with stamps of the JVM's own timeline and no bound
 * records; {@link #sync} throws {@code LOAD} (the sync protocol is the native library's), so
 * {@code hrts merge} takes the file with {@code --allow-unsynced}.
 *
 * <p>Any thread may record events at once. Failures are thrown as {@link io.hrts.HrtsException}
 * with the native message and kind ({@code INVALID_ARGUMENT}, {@code OS}, {@code TIMEOUT}, ...).
 */
public final class TraceWriter implements AutoCloseable {
    /** Exchanges in a sync round unless told otherwise. */
    public static final int DEFAULT_EXCHANGES = 50;

    private static final byte[] EMPTY = new byte[0];

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final String path;
    private long handle; // 0 once closed; guarded by lock
    /** The file written in Java on the portable implementation (else null); null once closed. */
    private PortableTrace portable; // guarded by lock

    private TraceWriter(long handle, String path) {
        this.handle = handle;
        this.path = path;
    }

    private TraceWriter(PortableTrace portable, String path) {
        this.portable = portable;
        this.path = path;
    }

    /**
     * Creates (or replaces) the trace file {@code path}.
     *
     * @param path the trace file to write
     * @param host this host's name in the file (null: {@code HRTS_TRACE_HOST}, else the hostname)
     * @param label free text naming this writer (null: none)
     * @return the writer; close it to write the file's end record
     * @throws io.hrts.HrtsException if the library, the segment or the file cannot be opened
     */
    public static TraceWriter open(Path path, String host, String label) {
        Objects.requireNonNull(path, "path");
        TraceNative.ensureOpen();
        String p = path.toString();
        if (TraceNative.PORTABLE) {
            return new TraceWriter(PortableTrace.create(p, host, label), p);
        }
        long h = TraceNative.nOpen(utf8(p), host == null ? null : utf8(host),
                label == null ? null : utf8(label));
        return new TraceWriter(h, p);
    }

    /**
     * Records an event stamped now, with no id and no payload.
     *
     * @param kind what the event marks
     * @param name the event's name
     * @return the event's local ITC stamp
     */
    public long event(EventKind kind, String name) {
        return event(kind, name, 0, null);
    }

    /**
     * Records an event stamped now.
     *
     * @param kind what the event marks
     * @param name the event's name
     * @param id the message id of a SEND/RECEIVE pair, or any correlation (0 if none)
     * @param payload data stored with the event (null: none)
     * @return the event's local ITC stamp (clock tick in the high bits, event counter in the low)
     */
    public long event(EventKind kind, String name, long id, byte[] payload) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        lock.readLock().lock();
        try {
            if (TraceNative.PORTABLE) {
                if (portable == null) {
                    throw closedError();
                }
                return portable.event(kind.code(), name, id, payload == null ? EMPTY : payload);
            }
            return TraceNative.nEvent(live(), kind.code(), utf8(name), id,
                    payload == null ? EMPTY : payload);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * One sync round of {@value #DEFAULT_EXCHANGES} exchanges with the master, recorded in the file.
     *
     * @param master "HOST:PORT" where {@code hrts sync serve} listens
     * @param phase where in the run this round is (start, end, periodic)
     * @return the offset from the master and its bound
     */
    public SyncResult sync(String master, SyncPhase phase) {
        return sync(master, phase, DEFAULT_EXCHANGES);
    }

    /**
     * One sync round with the master at {@code master} ("HOST:PORT", where {@code hrts sync
     * serve} listens), recorded in the file. Events from other threads go on meanwhile.
     *
     * @param master "HOST:PORT" of the master
     * @param phase where in the run this round is (start, end, periodic)
     * @param exchanges ping-pong exchanges in the round, 1..10000
     * @return the offset from the master and its bound
     * @throws io.hrts.HrtsException {@code TIMEOUT} if the master does not answer
     */
    public SyncResult sync(String master, SyncPhase phase, int exchanges) {
        Objects.requireNonNull(master, "master");
        Objects.requireNonNull(phase, "phase");
        if (exchanges < 1 || exchanges > 10_000) {
            throw new IllegalArgumentException("exchanges must be 1..10000, not " + exchanges);
        }
        if (TraceNative.PORTABLE) {
            TraceNative.refuseSync(master);
        }
        double[] out = new double[2];
        lock.readLock().lock();
        try {
            TraceNative.nSync(live(), utf8(master), phase.code(), exchanges, out);
        } finally {
            lock.readLock().unlock();
        }
        return new SyncResult(out[0], out[1]);
    }

    /** Writes the file's end record and closes it. Closing twice does nothing. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            PortableTrace t = portable;
            if (t != null) {
                portable = null;
                t.close();
            }
            long h = handle;
            if (h != 0) {
                handle = 0;
                TraceNative.nClose(h);
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * The file's path.
     *
     * @return the path given to {@link #open}
     */
    public String getPath() {
        return path;
    }

    private long live() {
        if (handle == 0) {
            throw closedError();
        }
        return handle;
    }

    private IllegalStateException closedError() {
        return new IllegalStateException("trace writer for " + path + " is closed");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
