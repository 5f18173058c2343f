package io.hrts.log4j2;

import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.util.ClockFactory;

/**
 * Logs one event in a JVM of its own and prints which clock Log4j made and the event's time: the
 * child of {@link HrtsLog4jClockTest#withoutHrtsLog4jKeepsLoggingOnItsOwnClock()}.
 */
public final class LogOneEvent {
    private LogOneEvent() {}

    public static void main(String[] args) {
        CapturingAppender capture = CapturingAppender.attach("hrts.test.child");
        LogManager.getLogger("hrts.test.child").info("one event");
        List<LogEvent> events = capture.events();
        long now = System.currentTimeMillis();
        if (events.size() != 1 || Math.abs(events.get(0).getTimeMillis() - now) > 60_000) {
            System.out.println("unexpected events: " + events);
            System.exit(1);
        }
        System.out.println("logged with " + ClockFactory.getClock().getClass().getName());
    }
}
