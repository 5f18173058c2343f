package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * One bound, three languages at once: the C library ({@code hrts_test bounded}), a child JVM
 * ({@link TestMains} {@code bounded}) and the command line ({@code hrts now --bound}, the Rust
 * API) read their intervals from one host page, concurrently, for two seconds. The page's daemon
 * is a test build's, whose every round publishes a fixed bound ({@code HRTS_TEST_BOUND}): this
 * machine's kernel may say its clock is unsynchronized, which gives no interval at all.
 *
 * <p>For one instant they must give one interval. A stamp's half width is the published word
 * (bound, line error, the cross-CPU shift) plus its growth since the word was learned, linear in
 * the stamp: while one word stands, every interval's (midpoint, half width) lies on one line,
 * whichever language computed it. The test groups the intervals by word, fits that line to all
 * three languages' points of each word, and requires every point on it within 4 ns (each half
 * width is whole nanoseconds, its growth rounded up; measured: within 0.6 ns). Each interval must also hold the
 * CLOCK_REALTIME read around it (the test bound makes the system clock true time).
 */
public class BoundAcrossLanguagesTest {
    private static final long WORD_NS = 50_000;
    /** How far a point may lie from its word's line, ns. */
    private static final double TOLERANCE_NS = 4;

    /** One interval as a reader printed it. */
    private static final class Interval {
        final String lang;
        final long earliest;
        final long latest;
        final String status;
        final long before;
        final long after;

        Interval(String lang, long earliest, long latest, String status, long before, long after) {
            this.lang = lang;
            this.earliest = earliest;
            this.latest = latest;
            this.status = status;
            this.before = before;
            this.after = after;
        }

        long mid() {
            return earliest + (latest - earliest) / 2;
        }

        long half() {
            return (latest - earliest) / 2;
        }

        @Override
        public String toString() {
            return lang + " [" + earliest + ", " + latest + "] " + status + " (clock " + before + ".." + after + ")";
        }
    }

    /** "bounded LANG: earliest E latest L status S before B after A" lines. */
    private static List<Interval> parse(String text) {
        List<Interval> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] w = line.trim().split(" ");
            if (w.length == 12 && w[0].equals("bounded")) {
                out.add(new Interval(w[1].replace(":", ""), Long.parseLong(w[3]), Long.parseLong(w[5]), w[7],
                        Long.parseLong(w[9]), Long.parseLong(w[11])));
            }
        }
        return out;
    }

    @Test
    public void cJavaAndTheCommandLineGiveOneIntervalForOneInstant() throws Exception {
        String testingCli = Procs.testingCli();
        Path dir = Files.createTempDirectory("hrts-bound-languages");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> env = new HashMap<>();
        env.put("HRTS_HOST", "on");
        env.put("HRTS_HOST_USER", Files.getAttribute(Path.of("/proc/self"), "unix:uid").toString());
        env.put("HRTS_HOST_DIR", dir.toString());
        // The host page, not the build's per-user segment (a named segment wins).
        env.put("HRTS_SEGMENT", null);
        ProcessBuilder daemonPb = new ProcessBuilder(testingCli, "daemon", "--foreground", "--dir", dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile());
        Procs.withEnv(daemonPb, env);
        daemonPb.environment().put("HRTS_TEST_BOUND", "synchronized," + WORD_NS);
        daemonPb.environment().put("HRTS_MODE", "tracking");
        Process daemon = daemonPb.start();
        List<Process> readers = new ArrayList<>();
        try {
            // Until the daemon has made its page, a reader would fall back to (and create) the
            // per-user segment: wait for its announcement, which follows the page.
            Path log = dir.resolve("daemon.log");
            for (int i = 0; i < 200 && !Files.readString(log).contains("a round every"); i++) {
                Thread.sleep(50);
            }
            assertTrue("the daemon made its page: " + Files.readString(log),
                    Files.readString(log).contains("a round every"));
            Map<String, String> info = new LinkedHashMap<>();
            for (int i = 0; i < 200 && !"synchronized".equals(info.get("bound status")); i++) {
                Thread.sleep(50);
                info = Procs.keyValues(Procs.run(List.of(testingCli, "info"), env).out);
            }
            assertEquals("the daemon's page: " + info + "\n" + Files.readString(dir.resolve("daemon.log")),
                    "synchronized", info.get("bound status"));

            // The C and Java readers: 400 intervals 5 ms apart each; the command line, one
            // process per interval, meanwhile.
            File cOut = dir.resolve("c.out").toFile();
            File javaOut = dir.resolve("java.out").toFile();
            readers.add(Procs.startTo(List.of(Procs.cTest(), "bounded", "400", "5000"), env, cOut));
            readers.add(Procs.startTo(Procs.javaMain("bounded", "400", "5000"), env, javaOut));
            StringBuilder cli = new StringBuilder();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < until) {
                long before = TestMains.realtimeNanos();
                Procs r = Procs.run(List.of(Procs.cli(), "now", "--bound"), env);
                long after = TestMains.realtimeNanos();
                assertEquals("hrts now --bound: " + r.err, 0, r.exit);
                String[] w = r.out.trim().split(" ");
                cli.append("bounded cli: earliest ").append(w[0]).append(" latest ").append(w[1]).append(" status ")
                        .append(w[2]).append(" before ").append(before).append(" after ").append(after).append('\n');
            }
            for (Process p : readers) {
                assertTrue("a reader ended", p.waitFor(60, TimeUnit.SECONDS));
                assertEquals("a reader's exit: " + Files.readString(cOut.toPath()) + Files.readString(javaOut.toPath()),
                        0, p.exitValue());
            }
            List<Interval> all = new ArrayList<>();
            all.addAll(parse(Files.readString(cOut.toPath(), StandardCharsets.UTF_8)));
            all.addAll(parse(Files.readString(javaOut.toPath(), StandardCharsets.UTF_8)));
            all.addAll(parse(cli.toString()));
            checkEach(all);
            checkOneLinePerWord(all, Double.parseDouble(info.get("bound drift ppm")));
        } finally {
            Procs.stopAll(readers, daemon, dir);
        }
    }

    /** Synchronized, holding the clock read around it, at least the word wide. */
    private static void checkEach(List<Interval> all) {
        Map<String, Integer> count = new TreeMap<>();
        for (Interval i : all) {
            count.merge(i.lang, 1, Integer::sum);
            assertEquals(i.toString(), "synchronized", i.status);
            assertTrue("holds the clock: " + i, i.earliest <= i.after && i.before <= i.latest);
            assertTrue("at least the word: " + i, i.half() >= WORD_NS);
        }
        assertEquals(count.toString(), 400, (int) count.get("c"));
        assertEquals(count.toString(), 400, (int) count.get("java"));
        assertTrue(count.toString(), count.getOrDefault("cli", 0) >= 10);
    }

    /**
     * Groups the intervals by the word they were computed from and fits, per word, the half width
     * as a line in the midpoint over every language's points: each point within {@link
     * #TOLERANCE_NS} of it. A word is told by {@code half − rate × mid}, constant while the word
     * stands (rate: the drift; the line's slope error is far smaller than the gap between words,
     * a round's worth of growth).
     */
    private static void checkOneLinePerWord(List<Interval> all, double driftPpm) {
        double rate = driftPpm * 1e-6;
        long origin = all.stream().mapToLong(Interval::mid).min().getAsLong();
        List<Interval> sorted = new ArrayList<>(all);
        sorted.sort(Comparator.comparingDouble(i -> i.half() - rate * (i.mid() - origin)));
        List<List<Interval>> words = new ArrayList<>();
        double last = Double.NaN;
        for (Interval i : sorted) {
            double key = i.half() - rate * (i.mid() - origin);
            if (words.isEmpty() || key - last > 2_000) {
                words.add(new ArrayList<>());
            }
            words.get(words.size() - 1).add(i);
            last = key;
        }
        int shared = 0;
        StringBuilder report = new StringBuilder();
        for (List<Interval> word : words) {
            long languages = word.stream().map(i -> i.lang).distinct().count();
            if (word.size() < 10 || languages < 2) {
                continue;
            }
            // Least squares over the word's points, midpoints relative to its first.
            long m0 = word.stream().mapToLong(Interval::mid).min().getAsLong();
            double n = word.size();
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (Interval i : word) {
                double x = i.mid() - m0;
                double y = i.half();
                sx += x;
                sy += y;
                sxx += x * x;
                sxy += x * y;
            }
            double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
            double at0 = (sy - slope * sx) / n;
            Map<String, Double> worst = new TreeMap<>();
            for (Interval i : word) {
                double off = Math.abs(i.half() - (at0 + slope * (i.mid() - m0)));
                worst.merge(i.lang, off, Math::max);
                assertTrue(String.format("%s lies %.1f ns from its word's line (half %.1f + %.3e x ns; %d points, %d languages)",
                        i, off, at0, slope, word.size(), languages), off <= TOLERANCE_NS);
            }
            report.append(String.format("word: %d points, half %.1f ns + %.3e per ns, worst %s%n", word.size(), at0, slope,
                    worst));
            if (languages == 3) {
                shared++;
            }
        }
        System.out.print(report);
        assertTrue("no word was read by all three languages:\n" + report, shared >= 1);
    }
}
