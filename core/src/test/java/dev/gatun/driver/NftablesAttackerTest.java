package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;

/** The attacker's suite on the nftables driver. */
class NftablesAttackerTest extends AttackerTrafficSuite {
    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "nftables");
    }

    @Override
    void removeLoopbackDrop(NetworkNamespace host) {
        Oracle.in(host, "nft", "flush", "chain", "inet", "gatun", "prerouting-raw");
    }
}
