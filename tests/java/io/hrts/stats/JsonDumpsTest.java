package io.hrts.stats;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.After;
import org.junit.Test;

/** The periodic JSON dump from Java, and its file target. */
public class JsonDumpsTest {
    @After
    public void stop() {
        Stats.stop();
    }

    @Test
    public void thePeriodicDumpIsReadableAndWrittenToTheConfiguredFile() throws Exception {
        Path dir = Files.createTempDirectory("hrts-json-dumps");
        Path file = dir.resolve("dump.json");
        try {
            StatsTest.restart("{\"json-dump\": {\"interval\": 20, \"file\": \"" + file + "\"},"
                    + " \"metrics-dump\": {\"interval\": 0}}");
            Stats.counter("java.periodic").increment(5);
            String latest = null;
            for (int i = 0; i < 100; i++) {
                Thread.sleep(20);
                latest = JsonDumps.latest();
                if (latest != null && latest.contains("\"java.periodic\":{")) {
                    break;
                }
            }
            assertTrue(String.valueOf(latest), latest != null && latest.contains("\"java.periodic\":{"));
            String written = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
            assertTrue(written, written.startsWith("{") && written.contains("\"java.periodic\":{"));
            assertNull(JsonDumps.fileError());
        } finally {
            Stats.stop();
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }

    @Test
    public void aFileThatCannotBeWrittenIsReportedNotFatal() throws Exception {
        StatsTest.restart("{\"json-dump\": {\"interval\": 10, \"file\": \"/nonexistent-dir/hrts/d.json\"},"
                + " \"metrics-dump\": {\"interval\": 0}}");
        String error = null;
        for (int i = 0; i < 100 && error == null; i++) {
            Thread.sleep(10);
            error = JsonDumps.fileError();
        }
        assertTrue(String.valueOf(error), error != null && error.contains("json-dump.file"));
        assertEquals(true, JsonDumps.latest() != null);
    }
}
