package io.hrts.log4j2;

import io.hrts.testing.ShiftedDrive;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.util.ClockFactory;

/**
 * The JVM side of {@code hrts_test drive} for Log4j2: for each line on stdin it logs an event and
 * prints the event's instant in epoch nanoseconds. Which clock Log4j2 uses is up to {@code
 * -Dlog4j2.clock}; it is named on stderr.
 */
public final class LogDriveChild {
    private LogDriveChild() {}

    public static void main(String[] args) throws Exception {
        ShiftedDrive.reportShiftedSystemClock();
        CapturingAppender capture = CapturingAppender.attach("hrts.test.drive");
        Logger logger = LogManager.getLogger("hrts.test.drive");
        System.err.println("log4j clock: " + ClockFactory.getClock().getClass().getName());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        for (String line; (line = in.readLine()) != null; ) {
            logger.info("round {}", line);
            List<LogEvent> events = capture.events();
            out.println(HrtsLog4jClockTest.epochNanos(events.get(events.size() - 1).getInstant()));
            out.flush();
        }
    }
}
