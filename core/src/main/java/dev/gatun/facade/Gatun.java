package dev.gatun.facade;

import dev.gatun.GatunException;
import dev.gatun.MissingLibraryException;
import dev.gatun.PrivilegeException;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.driver.HealableDriver;
import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.internal.NativeLibraries;
import dev.gatun.netlink.NftChannel;
import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The entry point for an embedding program: a driver for one host namespace.
 *
 * <pre>{@code
 * try (NetworkDriver gatun = Gatun.open(NetworkNamespace.current())) {
 *     gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
 *     Endpoint e = gatun.attach(EndpointSpec.of("n1", NetworkNamespace.named("c1")));
 *     gatun.publish(new PortRequest("n1", e.ip(), List.of(PortSpec.parse("8080:80")), null));
 * }
 * }</pre>
 */
public final class Gatun {

    private Gatun() {}

    /** A driver for {@code host}, chosen as {@link #choose} explains. */
    public static HealableDriver open(NetworkNamespace host) {
        return open(host, "auto");
    }

    /**
     * A driver for {@code host}: "nftables", "iptables", "iptables-legacy", "iptables-nft", or
     * "auto" (nftables when nf_tables works there and libnftnl loads, else iptables).
     */
    public static HealableDriver open(NetworkNamespace host, String driver) {
        String chosen = driver.equals("auto") ? choose(host).driver() : driver;
        return chosen.equals("nftables") ? BridgeDriver.nftables(host) : BridgeDriver.iptables(host, chosen, null);
    }

    /** Which driver "auto" picks in {@code host}, and why. */
    public record Choice(String driver, String reason) {}

    public static Choice choose(NetworkNamespace host) {
        try {
            NativeLibraries.requireNftables();
        } catch (MissingLibraryException e) {
            return new Choice("iptables", e.getMessage());
        }
        try (NftChannel channel = NftChannel.open(host)) {
            channel.generation();
            return new Choice("nftables", "nf_tables works in " + host.describe() + " and libnftnl loads");
        } catch (PrivilegeException e) {
            throw e;
        } catch (GatunException e) {
            return new Choice("iptables", "nf_tables is not usable in " + host.describe() + ": " + e.getMessage());
        }
    }

    /** Throws {@link MissingLibraryException}, naming the package to install, unless libmnl loads. */
    public static void requireNetlinkLibrary() {
        NativeLibraries.requireNetlink();
    }

    /** Throws {@link MissingLibraryException}, naming the package to install, unless libmnl and libnftnl load. */
    public static void requireNftablesLibraries() {
        NativeLibraries.requireNftables();
    }

    /** Whether this process has what gatun needs of root: CAP_NET_ADMIN, and CAP_SYS_ADMIN to enter namespaces. */
    public static boolean privileged() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    BigInteger caps = new BigInteger(line.substring(7).strip(), 16);
                    return caps.testBit(libc_h.CAP_NET_ADMIN) && caps.testBit(libc_h.CAP_SYS_ADMIN);
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }
}
