package io.hrts.stats;

import io.hrts.HrtsException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The statistics of every process of the user, read from the statistics segment in shared
 * memory: each process that runs hrts statistics (Rust, C or Java; {@link Stats#start()} here)
 * publishes its metrics there, and any process reads them without the instrumented process doing
 * anything.
 *
 * <pre>{@code
 * SharedStats.Snapshot s = SharedStats.snapshot();
 * for (SharedStats.ProcessStats p : s.processes()) {
 *     System.out.println(p.pid() + " " + p.program() + " " + p.state() + ": " + p.dump().json());
 * }
 * MetricDump requests = s.aggregate().get("requests"); // summed over the processes
 * }</pre>
 *
 * <p>The segment is {@code /hrts-stats-<uid>} unless the environment variable {@value
 * #ENV_SEGMENT} names another. A damaged, truncated or foreign segment gives an {@link
 * HrtsException} of kind {@code CORRUPT}, {@code TRUNCATED}, {@code FOREIGN} or {@code VERSION};
 * one of another user {@code PERMISSION}.
 */
public final class SharedStats {
    private SharedStats() {}

    /** The environment variable that names the statistics segment. */
    public static final String ENV_SEGMENT = "HRTS_STATS_SEGMENT";

    private static final int LONGS_PER_PROCESS = 3;
    /** taken, damaged slots, damaged cells. */
    private static final int LONGS_BEFORE_PROCESSES = 3;

    /** Whether the process that published an entry is still there. */
    public enum ProcessState {
        /** The process is running. */
        LIVE,
        /**
         * The process is gone (exited or killed); its statistics stay readable until a writer
         * reclaims them after the grace period ({@code HRTS_STATS_GRACE_MS}, 60 s by default).
         */
        EXITED
    }

    /**
     * One publishing statistics instance (normally one per process) and its metrics as of its
     * last publication.
     *
     * @param pid the process id
     * @param instance which statistics instance of the process (1 for its first)
     * @param program the program (service) name it registered under, at most 31 bytes: {@code
     *     shared-memory.program}, else (Java) {@link Stats#PROGRAM_PROPERTY}, else {@code
     *     HRTS_STATS_PROGRAM}, else (Java) the main class or jar, else {@code /proc/PID/comm}
     * @param state whether the process is still running
     * @param dump its metrics, as its own {@link Stats#dump()} gave them at its last publication
     */
    public record ProcessStats(long pid, int instance, String program, ProcessState state, StatsDump dump) {
        /**
         * When the process last published.
         *
         * @return its dump's timestamp, epoch nanoseconds on the hrts timeline
         */
        public long timestamp() {
            return dump.timestamp();
        }

        /**
         * The process's metrics by name.
         *
         * @return an unmodifiable map of name to metric, in name order
         */
        public Map<String, MetricDump> metrics() {
            return dump.metrics();
        }
    }

    /**
     * Everything in a statistics segment at one moment.
     *
     * @param segment the segment's name
     * @param taken when the snapshot was taken (epoch nanoseconds on the hrts timeline); 0 if
     *     there was no segment
     * @param processes every publishing instance, ordered by pid, then instance (unmodifiable)
     * @param aggregate the processes' metrics aggregated by name: a counter's value is the sum of
     *     the processes' values, a gauge's or timer's the value of the most recent update; the
     *     statistics add up counts, sums, interval counts and sums and take the min of the minimums
     *     and the max of the maximums; mean and interval mean follow from them; the moving average
     *     is the count-weighted mean; quantiles are NaN unless one process alone has the metric
     *     (quantiles cannot be merged from quantiles). A name used with different kinds aggregates
     *     only the kind of the lowest pid.
     * @param damagedSlots process slots left out because their words do not match their check
     *     words (a process wrote over the segment), with their metrics; never shown as numbers
     * @param damagedCells metric cells left out for the same reason (or as a damaged slot's)
     */
    public record Snapshot(String segment, long taken, List<ProcessStats> processes, StatsDump aggregate,
            int damagedSlots, int damagedCells) {
        /**
         * A snapshot; the list is copied.
         *
         * @param segment the segment's name
         * @param taken when the snapshot was taken
         * @param processes every publishing instance
         * @param aggregate the metrics aggregated by name
         * @param damagedSlots process slots left out as damaged
         * @param damagedCells metric cells left out as damaged
         */
        public Snapshot {
            processes = Collections.unmodifiableList(new ArrayList<>(processes));
        }

        /**
         * A snapshot with nothing damaged; the list is copied.
         *
         * @param segment the segment's name
         * @param taken when the snapshot was taken
         * @param processes every publishing instance
         * @param aggregate the metrics aggregated by name
         */
        public Snapshot(String segment, long taken, List<ProcessStats> processes, StatsDump aggregate) {
            this(segment, taken, processes, aggregate, 0, 0);
        }

        /**
         * Whether any process slot or metric cell was left out as damaged.
         *
         * @return {@code damagedSlots() + damagedCells() > 0}
         */
        public boolean damaged() {
            return damagedSlots > 0 || damagedCells > 0;
        }

        /**
         * The entries of one process.
         *
         * @param pid the process id
         * @return its publishing instances (usually one; none if it has not published)
         */
        public List<ProcessStats> process(long pid) {
            List<ProcessStats> out = new ArrayList<>();
            for (ProcessStats p : processes) {
                if (p.pid() == pid) {
                    out.add(p);
                }
            }
            return out;
        }
    }

    /**
     * A snapshot of the user's statistics segment (the one {@value #ENV_SEGMENT} names, else
     * {@code /hrts-stats-<uid>}). No segment (no process has published) is no error: the snapshot
     * has no process.
     *
     * @return the snapshot
     * @throws HrtsException if the segment cannot be read (see the class comment)
     */
    public static Snapshot snapshot() {
        return decode(nativeSnapshot(null));
    }

    /**
     * A snapshot of the statistics segment {@code segment}.
     *
     * @param segment the segment's name, e.g. {@code /hrts-stats-1000}
     * @return the snapshot (with no process if there is no such segment)
     * @throws HrtsException if {@code segment} is null ({@code INVALID_ARGUMENT}) or the segment
     *     cannot be read (see the class comment)
     */
    public static Snapshot snapshot(String segment) {
        return decode(nativeSnapshot(name(segment)));
    }

    /**
     * Removes the statistics segment {@code segment} (its name and its page). Processes attached
     * to it keep their mapping; a process that publishes later creates a fresh one.
     *
     * @param segment the segment's name
     * @return whether there was one
     * @throws HrtsException if {@code segment} is null ({@code INVALID_ARGUMENT}) or the
     *     operating system refused ({@code OS}, {@code PERMISSION})
     */
    public static boolean unlink(String segment) {
        byte[] name = name(segment);
        Stats.ensureReady();
        refusedOnPortable();
        return StatsNative.nUnlinkSegment(name);
    }

    /** Statistics segments are the native library's shared memory: the portable implementation has none. */
    private static void refusedOnPortable() {
        if (Impl.PORTABLE) {
            throw new HrtsException(HrtsException.Kind.LOAD, "shared statistics (a statistics segment) need the "
                    + "native library, and this JVM runs the portable implementation ("
                    + io.hrts.HighResTimestamp.implementation().reason() + "); its own statistics are in "
                    + "Stats.dump(), published nowhere");
        }
    }

    private static byte[] name(String segment) {
        if (segment == null) {
            throw new HrtsException(HrtsException.Kind.INVALID_ARGUMENT, "hrts-stats: the segment name is null");
        }
        return segment.getBytes(StandardCharsets.UTF_8);
    }

    private static Object[] nativeSnapshot(byte[] segment) {
        Stats.ensureReady();
        refusedOnPortable();
        return StatsNative.nSnapshot(segment);
    }

    private static Snapshot decode(Object[] raw) {
        long[] longs = (long[]) raw[1];
        String[] programs = (String[]) raw[2];
        Object[] dumps = (Object[]) raw[3];
        List<ProcessStats> processes = new ArrayList<>(programs.length);
        for (int i = 0; i < programs.length; i++) {
            int l = LONGS_BEFORE_PROCESSES + i * LONGS_PER_PROCESS;
            ProcessState state = longs[l + 2] == 1 ? ProcessState.LIVE : ProcessState.EXITED;
            processes.add(new ProcessStats(longs[l], (int) longs[l + 1], programs[i], state,
                    StatsDump.of((Object[]) dumps[i])));
        }
        return new Snapshot((String) raw[0], longs[0], processes, StatsDump.of((Object[]) dumps[programs.length]),
                (int) longs[1], (int) longs[2]);
    }
}
