package io.hrts.log4j2;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.hrts.HighResTimestamp;
import io.hrts.testing.ShiftedDrive;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.time.Instant;
import org.apache.logging.log4j.core.time.MutableInstant;
import org.apache.logging.log4j.core.util.ClockFactory;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Log4j2 with {@code -Dlog4j2.clock=io.hrts.log4j2.HrtsLog4jClock} (set by this project's test
 * task, as a service would): its log events carry hrts instants, checked against hrts stamps
 * taken around each logging call.
 */
public class HrtsLog4jClockTest {
    private CapturingAppender capture;
    private Logger logger;

    @Before
    public void setUp() {
        capture = CapturingAppender.attach("hrts.test.log4j2");
        logger = LogManager.getLogger("hrts.test.log4j2");
    }

    @After
    public void tearDown() {
        capture.detach();
    }

    @Test
    public void log4jMakesTheHrtsClockFromTheProperty() {
        assertEquals(HrtsLog4jClock.class.getName(), System.getProperty("log4j2.clock"));
        assertEquals(HrtsLog4jClock.class, ClockFactory.getClock().getClass());
    }

    @Test
    public void eventsCarryHrtsInstants() {
        int n = 1000;
        long[][] around = new long[n][2];
        for (int i = 0; i < n; i++) {
            around[i][0] = HighResTimestamp.getEpochNanoseconds();
            logger.info("event {}", i);
            around[i][1] = HighResTimestamp.getEpochNanoseconds();
        }
        List<LogEvent> events = capture.events();
        assertEquals(n, events.size());
        int subMicro = 0;
        for (int i = 0; i < n; i++) {
            LogEvent e = events.get(i);
            assertEquals("event " + i, e.getMessage().getFormattedMessage());
            long ns = epochNanos(e.getInstant());
            assertTrue("event " + i + ": " + around[i][0] + " <= " + ns + " <= " + around[i][1],
                    around[i][0] <= ns && ns <= around[i][1]);
            assertEquals(ns / 1_000_000, e.getTimeMillis());
            subMicro += ns % 1000 != 0 ? 1 : 0;
        }
        // Nanosecond instants, not milliseconds or microseconds padded with zeros.
        assertTrue(subMicro + " of " + n + " events have sub-microsecond digits", subMicro > n / 2);
    }

    @Test
    public void clockMethodsReadTheHrtsTimeline() {
        HrtsLog4jClock clock = new HrtsLog4jClock();
        MutableInstant instant = new MutableInstant();
        for (int i = 0; i < 1000; i++) {
            long before = HighResTimestamp.getEpochNanoseconds();
            clock.init(instant);
            long ms = clock.currentTimeMillis();
            long after = HighResTimestamp.getEpochNanoseconds();
            long ns = epochNanos(instant);
            assertTrue(before + " <= " + ns + " <= " + after, before <= ns && ns <= after);
            assertTrue(before / 1_000_000 + " <= " + ms + " <= " + after / 1_000_000,
                    before / 1_000_000 <= ms && ms <= after / 1_000_000);
        }
    }

    @Test
    public void eventsAgreeWithStampsOfACProcess() throws Exception {
        // The C test program stamps, sends a line to a child JVM that logs an event for it
        // (LogDriveChild), reads back the event's instant, stamps again and checks before <=
        // instant <= after for every round. The child's system clock is an hour ahead
        // (ShiftedDrive): only hrts instants can agree.
        int rounds = 1000;
        String clock = "-Dlog4j2.clock=" + HrtsLog4jClock.class.getName();
        ShiftedDrive.Result r = ShiftedDrive.run(rounds, LogDriveChild.class, clock);
        assertTrue(r.toString(), r.childClockShifted());
        assertTrue(r.toString(), r.output.contains("log4j clock: " + HrtsLog4jClock.class.getName()));
        assertTrue(r.toString(), r.allOrdered(rounds));

        // The control: the same child on Log4j2's default clock is an hour off in every round.
        ShiftedDrive.Result control = ShiftedDrive.run(20, LogDriveChild.class);
        assertTrue(control.toString(), control.childClockShifted());
        assertTrue(control.toString(), control.output.contains("drive: 20 rounds, 0 ordered, 20 violations"));
    }

    @Test
    public void withoutHrtsLog4jKeepsLoggingOnItsOwnClock() throws Exception {
        // A segment name hrts refuses: the clock cannot be made, Log4j says why on its status
        // logger and stamps with its default clock.
        List<String> cmd = new ArrayList<>(Arrays.asList(ShiftedDrive.prop("hrts.test.java"), "-Xcheck:jni",
                "-Dlog4j2.clock=" + HrtsLog4jClock.class.getName(), "-Dhrts.segment=no-leading-slash",
                "-cp", System.getProperty("java.class.path"), LogOneEvent.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(b);
        }
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        String out = b.toString(StandardCharsets.UTF_8.name());
        assertEquals(out, 0, p.exitValue());
        assertTrue(out, out.contains("Could not create " + HrtsLog4jClock.class.getName()));
        assertTrue(out, out.contains("hrts: cannot stamp log events with " + HrtsLog4jClock.class.getName()));
        assertTrue(out, out.contains("no-leading-slash"));
        assertTrue(out, out.contains("logged with org.apache.logging.log4j.core.util.SystemClock"));
    }

    static long epochNanos(Instant i) {
        return i.getEpochSecond() * 1_000_000_000L + i.getNanoOfSecond();
    }
}
