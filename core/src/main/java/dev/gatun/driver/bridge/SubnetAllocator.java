package dev.gatun.driver.bridge;

import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.InetText;
import dev.gatun.rtnl.Prefix;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * The addresses of one network's subnet, IPv4 or IPv6: which are host addresses, which are
 * taken, and the lowest one free. Pure arithmetic, no kernel: the driver gives it the
 * gateways and endpoint addresses it read.
 */
final class SubnetAllocator {

    /**
     * The lowest free address is searched among at most this many: a /64 has 2^64 addresses,
     * and no bridge holds a million ports.
     */
    static final int MAX_CANDIDATES = 1 << 20;

    private final String network;
    private final Prefix subnet;
    private final Set<InetAddress> taken;

    /** {@code taken} may hold addresses of the other family too; they never match this subnet's. */
    SubnetAllocator(String network, Prefix subnet, Collection<InetAddress> taken) {
        this.network = network;
        this.subnet = subnet.network();
        this.taken = new HashSet<>(taken);
    }

    /**
     * The gateway of {@code subnet}: {@code given} (a host address of it: neither its network
     * nor its IPv4 broadcast address), or its first address after the network address. A subnet
     * without such an address (a /32, a /128) has no room for one.
     */
    static InetAddress gateway(String network, Prefix subnet, InetAddress given) {
        Prefix base = subnet.network();
        if (given == null) {
            InetAddress first = offset(base, BigInteger.ONE);
            if (!base.contains(first)) {
                throw new InvalidInputException("subnet " + base + " of network " + network
                        + " has no address for a gateway; give it a shorter prefix");
            }
            return first;
        }
        // On the broadcast address the bridge would take every container's broadcast as its own.
        if (!isHostAddress(base, given)) {
            String broadcast = given.equals(broadcast(base)) ? " (it is its broadcast address)" : "";
            throw new InvalidInputException("gateway " + InetText.of(given) + " of network " + network
                    + " is not a host address of subnet " + base + broadcast);
        }
        return given;
    }

    /** Takes {@code ip} if it is a host address of the subnet that nobody holds. */
    InetAddress claim(InetAddress ip) {
        if (!isHostAddress(ip)) {
            throw new InvalidInputException("address " + InetText.of(ip) + " is not a host address of subnet "
                    + subnet + " of network " + network);
        }
        if (!taken.add(ip)) {
            throw new ConflictException("address " + InetText.of(ip) + " is already in use on network " + network);
        }
        return ip;
    }

    /**
     * Takes the lowest free address. The subnet's last address is never handed out (IPv4's
     * broadcast; IPv6 keeps the same rule), nor is its network address.
     */
    InetAddress next() {
        BigInteger size = BigInteger.ONE.shiftLeft(width(subnet) - subnet.length());
        BigInteger last = size.min(BigInteger.valueOf(MAX_CANDIDATES)).subtract(BigInteger.ONE);
        for (BigInteger i = BigInteger.ONE; i.compareTo(last) < 0; i = i.add(BigInteger.ONE)) {
            InetAddress a = offset(subnet, i);
            if (taken.add(a)) {
                return a;
            }
        }
        throw new ConflictException("network " + network + " has no free address left in " + subnet);
    }

    /** In the subnet, and neither its network address nor, for IPv4, its broadcast address. */
    boolean isHostAddress(InetAddress ip) {
        return isHostAddress(subnet, ip);
    }

    private static boolean isHostAddress(Prefix subnet, InetAddress ip) {
        return subnet.contains(ip) && !ip.equals(subnet.address()) && !ip.equals(broadcast(subnet));
    }

    /**
     * The IPv4 broadcast address of {@code subnet}, or null: IPv6 has none, and a /31 or /32
     * has none either (RFC 3021: both addresses of a /31 are hosts).
     */
    static InetAddress broadcast(Prefix subnet) {
        int hostBits = width(subnet) - subnet.length();
        if (subnet.isIpv6() || hostBits <= 1) {
            return null;
        }
        return offset(subnet.network(), BigInteger.ONE.shiftLeft(hostBits).subtract(BigInteger.ONE));
    }

    /** Whether two subnets share an address: one holds the other's network address. */
    static boolean overlaps(Prefix a, Prefix b) {
        if (a.isIpv6() != b.isIpv6()) {
            return false;
        }
        int shorter = Math.min(a.length(), b.length());
        return new Prefix(a.address(), shorter).network().equals(new Prefix(b.address(), shorter).network());
    }

    /** The address {@code n} after the subnet's network address, wrapping past the family's last. */
    static InetAddress offset(Prefix subnet, BigInteger n) {
        byte[] base = subnet.network().address().getAddress();
        byte[] raw = new BigInteger(1, base).add(n).toByteArray();
        byte[] out = new byte[base.length];
        int copy = Math.min(raw.length, out.length);
        System.arraycopy(raw, raw.length - copy, out, out.length - copy, copy);
        try {
            return InetAddress.getByAddress(out);
        } catch (UnknownHostException e) {
            throw new GatunException("address arithmetic failed", e);
        }
    }

    private static int width(Prefix p) {
        return p.address().getAddress().length * 8;
    }
}
