package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;

/** The attacker's suite on the iptables-legacy driver. */
class IptablesLegacyAttackerTest extends AttackerTrafficSuite {
    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "iptables-legacy");
    }

    @Override
    void removeLoopbackDrop(NetworkNamespace host) {
        Oracle.in(host, "iptables-legacy", "-w", "-t", "raw", "-D", "PREROUTING", "-j", "GATUN-LOOPBACK");
    }
}
