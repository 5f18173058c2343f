package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * Damage done by another process reaches Java as an exception, not a wrong time: a child JVM
 * attached to a segment of its own sees validate() throw CORRUPT after the C test program
 * damaged the header, and a base reset (a write of the base) repairs it.
 */
public class DamageTest {
    @Test
    public void damageByAnotherProcessIsReportedAndRepaired() throws Exception {
        String segment = "/hrts-junit-damage-" + ProcessHandle.current().pid();
        List<String> cmd = Procs.javaMain("validate-on-cue");
        cmd.add(1, "-Dhrts.segment=" + segment);
        cmd.add(1, "-Xcheck:jni");
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("attached", out.readLine());
            Procs damage = Procs.run(Procs.cTest(), "damage", segment);
            assertEquals(damage.toString(), 0, damage.exit);
            try (Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8)) {
                in.write("go\n");
            }
            assertEquals("first: CORRUPT", out.readLine());
            assertEquals("after reset: ok", out.readLine());
            assertTrue("child exits", child.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, child.exitValue());
        } finally {
            child.destroyForcibly();
            Procs.run(Procs.cli(), "--segment", segment, "unlink");
        }
    }
}
