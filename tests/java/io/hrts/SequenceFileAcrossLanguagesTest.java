package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * One segment name, three front ends, one sequence file. A C handle ({@code hrts_test seq NAME
 * N}, which calls {@code hrts_segment_open}), the command line ({@code hrts --segment NAME seq N})
 * and a JVM ({@code -Dhrts.segment=NAME}) take sequence numbers from the segment NAME in turn, each
 * a real process, and the segment is removed between them (as a reboot loses it), so that each one
 * resumes from its sequence file alone.
 *
 * <p>The core resolves all three requests by one rule (docs/configuration.md, "Which segment"):
 * {@code HRTS_SEQ_FILE} belongs to the segment the environment names, so a segment named by its
 * caller persists to {@code $XDG_STATE_HOME/hrts/NAME.seq}, whoever names it. If one of them used
 * another file, its numbers would start again below the others'.
 */
public class SequenceFileAcrossLanguagesTest {
    /** Numbers a process reserves in the file at a time: smaller than each one takes. */
    private static final String INTERVAL = "3";

    @Test
    public void aCHandleTheCommandLineAndAJvmShareOneSequenceFile() throws Exception {
        if (Portable.on()) {
            // The portable implementation persists nothing; the native run covers this.
            return;
        }
        String name = "/hrts-junit-seqfile-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        Path state = Files.createTempDirectory("hrts-seqfile");
        Path envFile = state.resolve("default-segment.seq");
        Map<String, String> env = new HashMap<>();
        env.put("XDG_STATE_HOME", state.toString());
        // The default segment's file (HRTS_SEGMENT is the build's segment, not NAME): no
        // front end may take it for NAME.
        env.put("HRTS_SEQ_FILE", envFile.toString());
        env.put("HRTS_SEQ_INTERVAL", INTERVAL);
        env.put("HRTS_HOST", "off");
        List<Long> numbers = new ArrayList<>();
        List<String> who = new ArrayList<>();
        try {
            for (int round = 0; round < 2; round++) {
                take(numbers, who, "c", Procs.run(List.of(Procs.cTest(), "seq", name, "4"), env), "seq c: ");
                unlink(name);
                take(numbers, who, "cli", Procs.run(List.of(Procs.cli(), "--segment", name, "seq", "4"), env), "");
                unlink(name);
                List<String> jvm = Procs.javaMain("next-sequence");
                jvm.add(1, "-D" + HighResTimestamp.SEGMENT_PROPERTY + "=" + name);
                take(numbers, who, "java", Procs.run(jvm, env), "ok ");
                unlink(name);
            }
            for (int i = 1; i < numbers.size(); i++) {
                assertTrue("each process resumes above the last one's numbers, from the one file: " + who + " "
                        + numbers, numbers.get(i) > numbers.get(i - 1));
            }
            Path own = state.resolve("hrts").resolve(name.substring(1) + ".seq");
            assertTrue("the segment's own file " + own, Files.isRegularFile(own));
            assertFalse("HRTS_SEQ_FILE is the default segment's: untouched", Files.exists(envFile));
        } finally {
            unlink(name);
            try (Stream<Path> paths = Files.walk(state)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The numbers a process printed, one a line after {@code prefix}; it must have succeeded. */
    private static void take(List<Long> numbers, List<String> who, String lang, Procs r, String prefix) {
        assertEquals(lang + ": " + r, 0, r.exit);
        int before = numbers.size();
        for (String line : r.out.split("\n")) {
            if (!line.isEmpty()) {
                assertTrue(lang + ": " + r, line.startsWith(prefix));
                numbers.add(Long.parseLong(line.substring(prefix.length()).trim()));
                who.add(lang);
            }
        }
        assertTrue(lang + " printed numbers: " + r, numbers.size() > before);
    }

    private static void unlink(String name) throws Exception {
        Procs r = Procs.run(Procs.cli(), "--segment", name, "unlink");
        assertEquals(r.toString(), 0, r.exit);
    }
}
