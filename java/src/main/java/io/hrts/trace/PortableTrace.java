package io.hrts.trace;

import io.hrts.HighResTimestamp;
import io.hrts.HrtsException;
import io.hrts.internal.ItcFormat;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A trace file written in pure Java, for a JVM on the portable implementation: the format of
 * native/trace/FORMAT.md (version 2), as the native writer writes it, with ITC stamps of this
 * JVM's own timeline. What differs: the header names no segment ({@code none (portable
 * implementation)}, source {@code nanotime}, 1 GHz), its clock id is this writer's own (no other
 * process reads its timeline), no BOUND record is written (no time service vouches for the
 * portable clock), and there are no sync rounds (the sync protocol is the native library's), so
 * {@code hrts merge} takes such a file with {@code --allow-unsynced}.
 */
final class PortableTrace {
    private static final byte[] MAGIC = {'H', 'R', 'T', 'S', 'T', 'R', 'C', 0};
    private static final int VERSION = 2;
    private static final int HEADER_FIXED_LEN = 88;
    private static final int MAX_PAYLOAD_LEN = 1 << 20;
    private static final int T_NAME = 1;
    private static final int T_EVENT = 2;
    private static final int T_END = 4;

    private final String path;
    private final OutputStream out;
    private final int eventBits;
    private final long tickNs;
    private final long originNs;
    /** Where the header's "maximum events on one clock tick" is, patched at close. */
    private final int maxEventsAt;
    private final Map<String, Integer> names = new HashMap<>();
    private long last;
    private long maxEvent;
    private long records;
    private long events;

    private PortableTrace(String path, OutputStream out, int eventBits, long tickNs, long originNs, int maxEventsAt) {
        this.path = path;
        this.out = out;
        this.eventBits = eventBits;
        this.tickNs = tickNs;
        this.originNs = originNs;
        this.maxEventsAt = maxEventsAt;
    }

    static PortableTrace create(String path, String hostOrNull, String labelOrNull) {
        ItcFormat format = ItcFormat.fromEnvironment();
        int bits = format.eventBits;
        long tick = format.tickNs;
        long origin = HighResTimestamp.getEpochNanoseconds();
        String host = hostOrNull != null ? hostOrNull : host();
        ByteBuffer h = ByteBuffer.allocate(1 << 17).order(ByteOrder.LITTLE_ENDIAN);
        h.put(MAGIC).putShort((short) VERSION).putShort((short) 0).putInt(0).putInt(bits)
                .putInt((int) ProcessHandle.current().pid()).putLong(tick).putLong(1).putLong(origin)
                // This writer's own clock id: no other process reads this JVM's timeline.
                .putLong(ThreadLocalRandom.current().nextLong() | 1).putLong(1_000_000_000L).putLong(0)
                .putLong(origin).putLong(HighResTimestamp.getGeneration());
        int budget = (0xffff - HEADER_FIXED_LEN - 8) / 4 - 2;
        for (String s : new String[] {host, "none (portable implementation)", "nanotime",
            labelOrNull == null ? "" : labelOrNull}) {
            putString(h, cut(s, budget));
        }
        int maxEventsAt = h.position();
        h.putLong(-1L); // not known until close
        h.putShort(10, (short) h.position());
        OutputStream o;
        try {
            o = new BufferedOutputStream(Files.newOutputStream(Paths.get(path)), 1 << 16);
            o.write(h.array(), 0, h.position());
        } catch (IOException | RuntimeException e) {
            throw new HrtsException(HrtsException.Kind.OS, "cannot create trace file " + path + ": " + e
                    + "; check that its directory exists and is writable");
        }
        return new PortableTrace(path, o, bits, tick, origin, maxEventsAt);
    }

    /** HRTS_TRACE_HOST, else the host's name, else "localhost" (as the native writer). */
    private static String host() {
        String h = System.getenv("HRTS_TRACE_HOST");
        if (h != null && !h.isEmpty()) {
            return h;
        }
        try {
            h = new String(Files.readAllBytes(Paths.get("/proc/sys/kernel/hostname")), StandardCharsets.UTF_8).trim();
            if (!h.isEmpty()) {
                return h;
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: ask the JDK
        }
        try {
            h = InetAddress.getLocalHost().getHostName();
            return h.isEmpty() ? "localhost" : h;
        } catch (IOException | RuntimeException e) {
            return "localhost";
        }
    }

    private static String cut(String s, int max) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= max) {
            return s;
        }
        int end = max;
        while (end > 0 && (b[end] & 0xc0) == 0x80) {
            end--;
        }
        return new String(b, 0, end, StandardCharsets.UTF_8);
    }

    private static void putString(ByteBuffer b, String s) {
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        b.putShort((short) u.length).put(u);
    }

    /** Records an event; the caller holds the writer's lock, so stamps and records keep one order. */
    synchronized long event(int kind, String name, long id, byte[] payload) {
        if (payload.length > MAX_PAYLOAD_LEN) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "an event payload of " + payload.length
                    + " bytes is larger than the " + MAX_PAYLOAD_LEN + " a trace record holds: store large data "
                    + "elsewhere and record a reference");
        }
        Integer nameId = names.get(name);
        if (nameId == null) {
            nameId = names.size();
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            ByteBuffer r = ByteBuffer.allocate(9 + n.length).order(ByteOrder.LITTLE_ENDIAN);
            r.put((byte) T_NAME).putInt(4 + n.length).putInt(nameId).put(n);
            write(r);
            names.put(name, nameId);
        }
        long stamp = stamp(HighResTimestamp.getEpochNanoseconds());
        ByteBuffer r = ByteBuffer.allocate(5 + 21 + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        r.put((byte) T_EVENT).putInt(21 + payload.length).put((byte) kind).putInt(nameId).putLong(stamp).putLong(id)
                .put(payload);
        write(r);
        events++;
        return stamp;
    }

    /** The next ITC stamp at {@code nowNs}: the tick in the high bits, the event counter in the low. */
    private long stamp(long nowNs) {
        long tick = Math.max(0, nowNs - originNs) / tickNs;
        long maxTick = -1L >>> eventBits;
        if (Long.compareUnsigned(tick, maxTick) >= 0) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "ITC stamps with " + eventBits
                    + " event bits and " + tickNs + " ns ticks cover " + maxTick + " ticks from the file's start, "
                    + "and they are used up: write to a new file or use coarser ticks (HRTS_ITC_TICK_NS)");
        }
        long fresh = tick << eventBits;
        long s = Long.compareUnsigned(fresh, last) > 0 ? fresh : last;
        last = s + 1;
        maxEvent = Math.max(maxEvent, s & ((1L << eventBits) - 1));
        return s;
    }

    private void write(ByteBuffer r) {
        try {
            out.write(r.array(), 0, r.position());
        } catch (IOException e) {
            throw new HrtsException(HrtsException.Kind.OS, "cannot write trace file " + path + ": " + e
                    + "; check free space and permissions; the file is incomplete");
        }
        records++;
    }

    /** Writes the END record and the header's count of events on one tick, and closes the file. */
    synchronized void close() {
        ByteBuffer r = ByteBuffer.allocate(21).order(ByteOrder.LITTLE_ENDIAN);
        r.put((byte) T_END).putInt(16).putLong(records).putLong(events);
        try {
            write(r);
            out.close();
            try (RandomAccessFile f = new RandomAccessFile(path, "rw")) {
                f.seek(maxEventsAt);
                f.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(maxEvent).array());
                f.getFD().sync();
            }
        } catch (IOException e) {
            throw new HrtsException(HrtsException.Kind.OS, "cannot write trace file " + path + ": " + e
                    + "; check free space and permissions; the file is incomplete");
        }
    }
}
