package dev.gatun.cli.cni;

import dev.gatun.cli.docker.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CniPluginIT} with a {@code gatun serve} for each test's host namespace: every call goes
 * through the C client to the serve's POST /v1/cni and must answer exactly as the JVM path. The
 * serve logs each CNI call it ran, so a client that fell back to a JVM would fail here.
 */
class CniPluginServedIT extends CniPluginIT {

    private final List<GatunServe> serves = new ArrayList<>();

    @Override
    void useHost(NetworkNamespace host) {
        serves.add(GatunServe.start(host.name(), null, "--log-requests"));
    }

    @Override
    boolean selfHealing() {
        return true;
    }

    @AfterEach
    void callsWereServed() throws InterruptedException {
        try {
            for (GatunServe serve : serves) {
                // Its log is read from a pipe: give the last line a moment to arrive.
                for (int i = 0; i < 100 && !serve.stderr().contains("ran CNI "); i++) {
                    Thread.sleep(20);
                }
                assertThat(serve.stderr()).as("the serve's log: it ran the test's CNI calls").contains("ran CNI ");
                assertThat(serve.isAlive()).isTrue();
            }
        } finally {
            serves.forEach(GatunServe::close);
            serves.clear();
        }
    }
}
