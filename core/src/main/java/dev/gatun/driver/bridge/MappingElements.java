package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.Protocol;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.nft.Concatenation;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.StoredElement;
import dev.gatun.nft.expr.Counter;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A published-port mapping as an element of one of gatun's four maps, both ways: which map it
 * is in, its key ([host address .] protocol . host port) and its data (container address .
 * container port) as the bytes the kernel keeps (see {@link GatunRuleset}), the owner as comment.
 */
final class MappingElements {

    static final List<NftSet> MAPS = List.of(GatunRuleset.PORTS4, GatunRuleset.HOSTIP4, GatunRuleset.PORTS6,
            GatunRuleset.HOSTIP6);

    private MappingElements() {}

    /** Every mapping in the four maps. */
    static List<PortMapping> all(Nftables nft) {
        List<PortMapping> out = new ArrayList<>();
        for (NftSet map : MAPS) {
            for (StoredElement e : storedOrNone(nft, map)) {
                out.add(mapping(map, e));
            }
        }
        return out;
    }

    /** Every mapping in the four maps, with the counts of those whose element carries a counter. */
    static List<PortTraffic> traffic(Nftables nft) {
        List<PortTraffic> out = new ArrayList<>();
        for (NftSet map : MAPS) {
            for (StoredElement e : storedOrNone(nft, map)) {
                Counter c = e.counter();
                out.add(new PortTraffic(mapping(map, e), c == null ? null : new PortTraffic.Traffic(c.packets(), c.bytes())));
            }
        }
        return out;
    }

    /**
     * A map's elements; none when the kernel has no such map: gatun's table is not made yet, or
     * someone removed it (a serve puts it back). Asked directly rather than after listing the
     * table, which cost six times as much as reading all four maps.
     */
    private static List<StoredElement> storedOrNone(Nftables nft, NftSet map) {
        try {
            return nft.storedElements(map);
        } catch (NetlinkException e) {
            if (e.isNotFound()) {
                return List.of();
            }
            throw e;
        }
    }

    /** Per map, one element list: the transaction splits it into messages by size. */
    static Map<NftSet, List<StoredElement>> group(Collection<PortMapping> mappings,
                                                  Function<PortMapping, StoredElement> element) {
        // The four maps are constants: compared by identity, not by a record hash of their whole definition.
        Map<NftSet, List<StoredElement>> out = new IdentityHashMap<>(MAPS.size());
        for (PortMapping m : mappings) {
            out.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element.apply(m));
        }
        return out;
    }

    static NftSet map(PortMapping m) {
        boolean v4 = m.containerIp() instanceof Inet4Address;
        if (m.hostIp() == null) {
            return v4 ? GatunRuleset.PORTS4 : GatunRuleset.PORTS6;
        }
        return v4 ? GatunRuleset.HOSTIP4 : GatunRuleset.HOSTIP6;
    }

    static byte[] key(PortMapping m) {
        NftSet map = map(m);
        byte[] protocol = {(byte) m.protocol().number()};
        return m.hostIp() == null
                ? Concatenation.of(map.keyType(), protocol, port(m.hostPort()))
                : Concatenation.of(map.keyType(), m.hostIp().getAddress(), protocol, port(m.hostPort()));
    }

    /** The element of {@code m}; with {@code counted}, carrying a counter of its own. */
    static StoredElement element(PortMapping m, boolean counted) {
        StoredElement e = new StoredElement(key(m), Concatenation.of(map(m).dataType(), m.containerIp().getAddress(),
                port(m.containerPort())), m.owner());
        return counted ? e.counted() : e;
    }

    /** The mapping an element of {@code map} holds, with no network named. */
    static PortMapping mapping(NftSet map, StoredElement e) {
        boolean bound = map == GatunRuleset.HOSTIP4 || map == GatunRuleset.HOSTIP6;
        byte[][] key = Concatenation.split(map.keyType(), e.key());
        byte[][] data = Concatenation.split(map.dataType(), e.data());
        int i = bound ? 1 : 0;
        return new PortMapping(null, Protocol.ofNumber(key[i][0] & 0xff), bound ? address(key[0]) : null,
                port(key[i + 1]), address(data[0]), port(data[1]), e.comment() == null ? "" : e.comment());
    }

    private static byte[] port(int port) {
        return new byte[] {(byte) (port >> 8), (byte) port};
    }

    private static int port(byte[] bigEndian) {
        return ((bigEndian[0] & 0xff) << 8) | (bigEndian[1] & 0xff);
    }

    private static InetAddress address(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(bytes.length + " bytes are not an IP address", e);
        }
    }
}
