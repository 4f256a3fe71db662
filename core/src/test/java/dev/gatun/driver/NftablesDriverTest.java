package dev.gatun.driver;

import dev.gatun.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;

/** The contract suite on the nftables driver. */
class NftablesDriverTest extends DriverContractSuite {

    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "nftables");
    }

    @Override
    String firewallState(NetworkNamespace host) {
        return Oracle.in(host, "nft", "list", "ruleset");
    }

    @Override
    boolean firewallKnowsBridge(NetworkNamespace host, String bridge) {
        return Oracle.in(host, "nft", "list", "ruleset").contains("\"" + bridge + "\"");
    }
}
