/**
 * gatun's core: container networks, endpoints and published ports programmed over netlink. The
 * packages exported are its API; the implementation of the bridge driver
 * ({@code dev.gatun.driver.bridge}), the native glue ({@code dev.gatun.internal}) and the
 * generated bindings are not, so that no caller can depend on them and the compiler says so.
 */
module dev.gatun.core {
    requires dev.gatun.bindings;
    requires org.freedesktop.dbus;

    exports dev.gatun;
    exports dev.gatun.conntrack;
    exports dev.gatun.driver;
    exports dev.gatun.driver.foreign;
    exports dev.gatun.facade;
    // dbus-java makes the proxy of firewalld's zone interface (FirewalldZone.Zones) reflectively.
    opens dev.gatun.driver.foreign to org.freedesktop.dbus;
    exports dev.gatun.netlink;
    exports dev.gatun.netns;
    exports dev.gatun.nft;
    exports dev.gatun.nft.value;
    exports dev.gatun.rtnl;
    exports dev.gatun.sockdiag;
}
