package io.hrts.log4j2;

import java.util.ArrayList;
import java.util.List;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/** An appender keeping an immutable copy of every event of one logger (and only that logger). */
final class CapturingAppender extends AbstractAppender {
    private final List<LogEvent> events = new ArrayList<>();
    private final String loggerName;

    private CapturingAppender(String loggerName) {
        super("capture-" + loggerName, null, null, true, Property.EMPTY_ARRAY);
        this.loggerName = loggerName;
    }

    /** Routes every event of {@code loggerName} to a new appender, and nowhere else. */
    static CapturingAppender attach(String loggerName) {
        CapturingAppender a = new CapturingAppender(loggerName);
        a.start();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration config = ctx.getConfiguration();
        config.addAppender(a);
        LoggerConfig lc = LoggerConfig.newBuilder()
                .setLoggerName(loggerName)
                .setLevel(Level.ALL)
                .setAdditivity(false)
                .setConfig(config)
                .build();
        lc.addAppender(a, Level.ALL, null);
        config.addLogger(loggerName, lc);
        ctx.updateLoggers();
        return a;
    }

    void detach() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().removeLogger(loggerName);
        ctx.updateLoggers();
        stop();
    }

    @Override
    public synchronized void append(LogEvent event) {
        // Events may be reused (garbage-free logging): keep a copy.
        events.add(event.toImmutable());
    }

    synchronized List<LogEvent> events() {
        return new ArrayList<>(events);
    }
}
