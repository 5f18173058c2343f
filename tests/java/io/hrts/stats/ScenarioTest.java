package io.hrts.stats;

import static org.junit.Assert.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * The cross-language scenario (native/stats/examples/scenario.rs, tests/c/stats) driven from
 * Java gives the same dump as the Rust one, compared in the comparable form the example prints
 * (no timestamps, interval statistics, instance-timer durations or queue counters).
 */
public class ScenarioTest {
    static final String CONFIG = "{\"handystats\": {\"incremental-statistics\": {\"moving-average-alpha\": 0.25},"
            + " \"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0},"
            + " \"exact-stamps\": [\"scenario.*\"]}}";

    static String javaScenario() {
        Stats.stop();
        Stats.configureJson(CONFIG);
        Stats.start();
        Stats.start(); // idempotent
        Counter requests = Stats.counter("scenario.requests");
        for (int i = 0; i < 10; i++) {
            requests.increment();
        }
        requests.decrement(3);
        requests.add(5);
        Counter balance = Stats.counter("scenario.balance");
        balance.init(100);
        balance.add(-150);
        balance.add(20);
        Gauge queue = Stats.gauge("scenario.queue");
        for (int i = 1; i <= 20; i++) {
            queue.set(i * 0.5);
        }
        Timer latency = Stats.timer("scenario.latency");
        for (int i = 1; i <= 10; i++) {
            latency.record(1000L * i);
        }
        Timer spans = Stats.timer("scenario.spans");
        spans.start(1);
        spans.start(2);
        spans.start();
        spans.stop(2);
        spans.stop(1);
        spans.stop();
        spans.stop(9); // no such instance
        String json = Stats.jsonDump();
        Stats.stop();
        Stats.stop(); // idempotent
        return json;
    }

    static String run(List<String> cmd) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.directory(new File(System.getProperty("hrts.test.repoRoot")));
        String own = null;
        if (io.hrts.HighResTimestamp.implementation().isPortable()) {
            // The Rust side stamps on a segment: not the test JVM's, which a portable JVM never
            // creates (HighResTimestampTest checks that no process did), but one of its own.
            own = "/hrts-junit-scenario-" + ProcessHandle.current().pid();
            pb.environment().put("HRTS_SEGMENT", own);
        }
        try {
            return runIn(pb, cmd);
        } finally {
            if (own != null) {
                new ProcessBuilder(System.getProperty("hrts.test.cli"), "--segment", own, "unlink")
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
            }
        }
    }

    private static String runIn(ProcessBuilder pb, List<String> cmd) throws IOException, InterruptedException {
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(out);
        }
        if (!p.waitFor(600, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + cmd);
        }
        assertEquals("exit status of " + cmd, 0, p.exitValue());
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    public void javaGivesTheSameDumpAsRust() throws Exception {
        String json = javaScenario();
        Path file = Files.createTempFile("hrts-stats-java", ".json");
        try {
            Files.write(file, json.getBytes(StandardCharsets.UTF_8));
            // Built by the scenarioExample task (cargo build -p hrts-stats --example scenario).
            List<String> example = new ArrayList<>(Arrays.asList(System.getProperty("hrts.test.scenario")));
            String rust = run(example);
            example.addAll(Arrays.asList("--normalize", file.toString()));
            String java = run(example);
            assertEquals(rust, java);
        } finally {
            Files.delete(file);
        }
    }
}
