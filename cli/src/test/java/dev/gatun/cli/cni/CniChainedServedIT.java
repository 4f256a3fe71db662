package dev.gatun.cli.cni;

import dev.gatun.cli.docker.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link CniChainedIT} with a {@code gatun serve} for the host namespace: each gatun call goes to its POST /v1/cni. */
class CniChainedServedIT extends CniChainedIT {

    private final List<GatunServe> serves = new ArrayList<>();

    @Override
    void useHost(NetworkNamespace host) {
        serves.add(GatunServe.start(host.name(), null, "--log-requests"));
    }

    private static int ran(GatunServe serve) {
        return serve.stderr().split("ran CNI ", -1).length - 1;
    }

    @AfterEach
    void callsWereServed() throws InterruptedException {
        try {
            // Every gatun call of the test: an ADD and a DEL for each of two containers, per version.
            int calls = 4 * VERSIONS.size();
            for (GatunServe serve : serves) {
                for (int i = 0; i < 100 && ran(serve) < calls; i++) {
                    Thread.sleep(20);
                }
                assertThat(ran(serve)).as("CNI calls the serve ran; its log:\n" + serve.stderr()).isEqualTo(calls);
                assertThat(serve.isAlive()).isTrue();
            }
        } finally {
            serves.forEach(GatunServe::close);
            serves.clear();
        }
    }
}
