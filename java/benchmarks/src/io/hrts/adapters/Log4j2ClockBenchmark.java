package io.hrts.adapters;

import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A Log4j2 log event made and delivered (garbage-free path: reusable events and messages, to an
 * appender that only reads the event's instant), with Log4j2's default clock and with
 * {@code -Dlog4j2.clock=io.hrts.log4j2.HrtsLog4jClock}: Log4j2 picks its clock once per JVM, so
 * each runs in a fork of its own.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class Log4j2ClockBenchmark {
    private static final String ARG = "argument";
    private Logger logger;
    private InstantReader reader;

    /** Reads what a layout would: the event's instant. Allocates nothing. */
    static final class InstantReader extends AbstractAppender {
        long sink;

        InstantReader() {
            super("instant-reader", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent event) {
            sink += event.getInstant().getEpochSecond() + event.getInstant().getNanoOfSecond();
        }
    }

    @Setup
    public void setUp() {
        reader = new InstantReader();
        reader.start();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration config = ctx.getConfiguration();
        config.addAppender(reader);
        LoggerConfig lc = LoggerConfig.newBuilder().setLoggerName("bench").setLevel(Level.ALL)
                .setAdditivity(false).setIncludeLocation("false").setConfig(config).build();
        lc.addAppender(reader, Level.ALL, null);
        config.addLogger("bench", lc);
        ctx.updateLoggers();
        logger = LogManager.getLogger("bench");
    }

    @Benchmark
    @Fork(1)
    public long log4j2EventDefaultClock() {
        logger.info("event {}", ARG);
        return reader.sink;
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = "-Dlog4j2.clock=io.hrts.log4j2.HrtsLog4jClock")
    public long log4j2EventHrtsClock() {
        logger.info("event {}", ARG);
        return reader.sink;
    }
}
