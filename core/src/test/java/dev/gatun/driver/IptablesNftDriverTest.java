package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;

/** The contract suite on the iptables driver with iptables-nft. */
class IptablesNftDriverTest extends DriverContractSuite {

    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "iptables-nft");
    }

    @Override
    String firewallState(NetworkNamespace host) {
        return IptablesState.of(host, "nft");
    }

    @Override
    boolean firewallKnowsBridge(NetworkNamespace host, String bridge) {
        return IptablesState.of(host, "nft").contains(" " + bridge + " ");
    }
}
