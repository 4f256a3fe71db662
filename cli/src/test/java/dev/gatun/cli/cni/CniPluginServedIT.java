package dev.gatun.cli.cni;

import dev.gatun.cli.testing.CniExec;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CniPluginIT} with a {@code gatun serve} for each test's host namespace: every call goes
 * through the C client to the serve's POST /v1/cni and must answer exactly as the JVM path. The
 * serve logs each CNI call it ran: after each test, that count must equal the test's own count
 * of gatun runs, so a single call that fell back to a JVM fails the test.
 */
class CniPluginServedIT extends CniPluginIT {

    private final List<GatunServe> serves = new ArrayList<>();
    private final List<CniExec> labs = new ArrayList<>();

    @Override
    void useHost(NetworkNamespace host) {
        serves.add(GatunServe.start(host.name(), null, "--log-requests"));
    }

    @Override
    CniExec lab(NetworkNamespace host) {
        CniExec cni = super.lab(host);
        labs.add(cni);
        return cni;
    }

    @Override
    boolean selfHealing() {
        return true;
    }

    /** The CNI calls {@code serve} logged that it ran. */
    static int ran(GatunServe serve) {
        return serve.stderr().split("ran CNI ", -1).length - 1;
    }

    /** Asserts that the serves ran exactly the {@code calls} gatun runs of the test (their log is read from a pipe: waits for it). */
    static void everyCallServed(List<GatunServe> serves, int calls) throws InterruptedException {
        assertThat(calls).as("the test ran gatun").isPositive();
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (serves.stream().mapToInt(CniPluginServedIT::ran).sum() < calls && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        StringBuilder logs = new StringBuilder();
        serves.forEach(s -> logs.append(s.stderr()));
        assertThat(serves.stream().mapToInt(CniPluginServedIT::ran).sum())
                .as("CNI calls the serve ran, of the test's %d; its log:%n%s", calls, logs).isEqualTo(calls);
        for (GatunServe serve : serves) {
            assertThat(serve.isAlive()).isTrue();
        }
    }

    @AfterEach
    void callsWereServed() throws InterruptedException {
        try {
            everyCallServed(serves, labs.stream().mapToInt(l -> l.gatunRuns.get()).sum());
        } finally {
            serves.forEach(GatunServe::close);
            serves.clear();
            labs.clear();
        }
    }
}
