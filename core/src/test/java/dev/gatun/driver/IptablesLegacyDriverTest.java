package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;

/** The contract suite on the iptables driver with iptables-legacy. */
class IptablesLegacyDriverTest extends DriverContractSuite {

    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "iptables-legacy");
    }

    @Override
    String firewallState(NetworkNamespace host) {
        return IptablesState.of(host, "legacy");
    }

    @Override
    boolean firewallKnowsBridge(NetworkNamespace host, String bridge) {
        return IptablesState.of(host, "legacy").contains(" " + bridge + " ");
    }
}
