package dev.gatun.cli.cni;

import dev.gatun.cli.testing.CniExec;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;


/** {@link CniChainedIT} with a {@code gatun serve} for the host namespace: each gatun call goes to its POST /v1/cni. */
class CniChainedServedIT extends CniChainedIT {

    private final List<GatunServe> serves = new ArrayList<>();

    @Override
    void useHost(NetworkNamespace host) {
        serves.add(GatunServe.start(host.name(), null, "--log-requests"));
    }

    private final List<CniExec> labs = new ArrayList<>();

    @Override
    CniExec lab(NetworkNamespace host) {
        CniExec cni = super.lab(host);
        labs.add(cni);
        return cni;
    }

    @AfterEach
    void callsWereServed() throws InterruptedException {
        try {
            CniPluginServedIT.everyCallServed(serves, labs.stream().mapToInt(l -> l.gatunRuns.get()).sum());
        } finally {
            serves.forEach(GatunServe::close);
            serves.clear();
            labs.clear();
        }
    }
}
