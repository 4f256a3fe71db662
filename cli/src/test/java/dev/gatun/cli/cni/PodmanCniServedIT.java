package dev.gatun.cli.cni;

import dev.gatun.cli.docker.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link PodmanCniIT} with a {@code gatun serve} for the host namespace: Podman's plugin calls go through the C client. */
class PodmanCniServedIT extends PodmanCniIT {

    private final List<GatunServe> serves = new ArrayList<>();

    @Override
    void useHost(NetworkNamespace host) {
        serves.add(GatunServe.start(host.name(), null, "--log-requests"));
    }

    @AfterEach
    void callsWereServed() throws InterruptedException {
        try {
            for (GatunServe serve : serves) {
                // Its log is read from a pipe: give the last line a moment to arrive.
                for (int i = 0; i < 100 && !serve.stderr().contains("ran CNI ADD"); i++) {
                    Thread.sleep(20);
                }
                assertThat(serve.stderr()).as("the serve's log: it ran Podman's CNI calls").contains("ran CNI ADD");
            }
        } finally {
            serves.forEach(GatunServe::close);
            serves.clear();
        }
    }
}
