package dev.gatun.cli.netavark;

import dev.gatun.cli.testing.Podman5Lab;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PodmanNetavarkIT} with a {@code gatun serve} running in the test bed: the plugin file's
 * calls go to it through the C client (no JVM per call), and every test checks that the serve
 * ran them.
 */
class PodmanNetavarkServedIT extends PodmanNetavarkIT {

    @Override
    boolean served() {
        return true;
    }

    @Override
    void checkServed(Podman5Lab lab, String verb, int calls) throws InterruptedException {
        for (int i = 0; i < 100 && ran(lab, verb) < calls; i++) {
            Thread.sleep(20);
        }
        assertThat(ran(lab, verb)).as("the serve's log: it ran every one of netavark's " + verb + " calls\n"
                + lab.serve().stderr()).isEqualTo(calls);
    }

    private static long ran(Podman5Lab lab, String verb) {
        return lab.serve().stderr().lines().filter(l -> l.contains("ran netavark " + verb + " ")).count();
    }
}
