package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;

/** The traffic suite on the iptables driver with iptables-legacy. */
class IptablesLegacyTrafficTest extends DriverTrafficSuite {
    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "iptables-legacy");
    }
}
