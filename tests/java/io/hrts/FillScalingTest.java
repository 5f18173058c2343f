package io.hrts;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.junit.Test;

/**
 * fillEpochNanoseconds costs time linear in the length whatever the JVM flags. Under
 * -Xcheck:jni the checker copies a pinned array on every release, so a fill that pinned the
 * whole array for each chunk was quadratic (1M elements 140 ms, 4M 3 s). This compares the
 * growth, not a speed: four times the elements must take well under sixteen times as long.
 */
public class FillScalingTest {
    @Test
    public void fillGrowsLinearlyUnderCheckJni() throws Exception {
        List<String> cmd = Procs.javaMain("fill-scaling");
        cmd.add(1, "-Xcheck:jni");
        cmd.add(1, "-Xmx512m");
        Procs r = Procs.run(cmd);
        assertEquals(r.toString(), 0, r.exit);
        String[] f = r.out.trim().split(" ");
        assertEquals(r.toString(), "fill", f[0]);
        double small = Double.parseDouble(f[2]);
        double large = Double.parseDouble(f[4]);
        // Linear gives about 4; quadratic about 16. The floor keeps timer noise on a
        // 1M fill of a few milliseconds from deciding the ratio.
        double ratio = large / Math.max(small, 1.0);
        assertTrue("4M took " + large + " ms, 1M " + small + " ms: ratio " + ratio, ratio < 9.0);
    }
}
