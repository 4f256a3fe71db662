package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortMapping.HostKey;

import java.net.Inet4Address;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;

/**
 * The keys one publish request names, to refuse a host port named twice: a port on every
 * address is one bit of (family, protocol, port), so a bulk publish needs no set of 100,000 keys.
 */
final class RequestKeys {
    /** Below this many keys on every address a small set holds them; a bit set of up to 48 KiB only above. */
    private static final int FEW = 64;
    private Set<Integer> fewEveryAddress = new HashSet<>();
    private BitSet everyAddress;
    private Set<HostKey> oneAddress;

    /** False when the request named {@code m}'s key before. */
    boolean add(PortMapping m) {
        if (m.hostIp() == null) {
            int bit = ((m.containerIp() instanceof Inet4Address ? 0 : 4) + m.protocol().ordinal()) << 16 | m.hostPort();
            if (everyAddress == null) {
                if (!fewEveryAddress.add(bit)) {
                    return false;
                }
                if (fewEveryAddress.size() > FEW) {
                    everyAddress = new BitSet();
                    fewEveryAddress.forEach(everyAddress::set);
                    fewEveryAddress = null;
                }
                return true;
            }
            if (everyAddress.get(bit)) {
                return false;
            }
            everyAddress.set(bit);
            return true;
        }
        if (oneAddress == null) {
            oneAddress = new HashSet<>();
        }
        return oneAddress.add(m.hostKey());
    }
}
