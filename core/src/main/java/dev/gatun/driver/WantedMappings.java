package dev.gatun.driver;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The mappings a {@link SelfHealingDriver} keeps in place, one per {@link PortMapping.HostKey},
 * in the order their keys were first put, as a {@code LinkedHashMap<HostKey, PortMapping>}
 * would keep them, in under a third of its memory: 100,000 mappings took 10.6 MiB as a map
 * entry, a key and a mapping object each, and take 3 MiB here. Each mapping is two longs, its
 * host key and the rest packed; what many mappings share (the host address; the network,
 * container address and owner) is held once in {@link SharedValues}, and forgotten with the
 * last mapping that uses it. Mappings are made again when asked for. Not thread-safe.
 */
final class WantedMappings {

    private static final long REMOVED = -1;
    private static final int MIN_CAPACITY = 16;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final int PORT_BITS = 16;
    /** Where a key's host address reference starts: after the family (1 bit), protocol (2) and host port (16). */
    private static final int HOST_SHIFT = 3 + PORT_BITS;
    private static final Protocol[] PROTOCOLS = Protocol.values();

    /** What mappings with one target share beside their host key. */
    private record Target(String network, InetAddress containerIp, String owner) {
        // Written out, as HostKey's: a record's generated ones go through method handles.
        @Override
        public boolean equals(Object o) {
            return o instanceof Target t && Objects.equals(t.owner, owner) && Objects.equals(t.containerIp, containerIp)
                    && Objects.equals(t.network, network);
        }

        @Override
        public int hashCode() {
            return (Objects.hashCode(network) * 31 + Objects.hashCode(containerIp)) * 31 + Objects.hashCode(owner);
        }
    }

    private final SharedValues<InetAddress> hostAddresses = new SharedValues<>();
    private final SharedValues<Target> targets = new SharedValues<>();
    /** Entries in the order first put: a packed host key ({@link #REMOVED} once taken out) and its packed rest. */
    private long[] keys;
    private long[] values;
    /** Entries written, those removed since included. */
    private int used;
    private int size;
    /** Open addressing over the entries, twice as many slots: an entry's index + 1, 0 where empty. */
    private int[] slots;
    private int shift;

    WantedMappings() {
        allocate(MIN_CAPACITY);
    }

    int size() {
        return size;
    }

    /** Puts {@code m}, in place of the one with its host key if there is one (which keeps its place in the order). */
    void put(PortMapping m) {
        checkPort(m.hostPort());
        checkPort(m.containerPort());
        int hostRef = m.hostIp() == null ? 0 : hostAddresses.acquire(m.hostIp()) + 1;
        long key = key(m, hostRef);
        long value = m.containerPort() | (long) targets.acquire(new Target(m.network(), m.containerIp(), m.owner())) << PORT_BITS;
        int found = find(key);
        if (found >= 0) {
            if (hostRef != 0) {
                // The entry holds its host address already.
                hostAddresses.release(hostRef - 1);
            }
            targets.release(targetId(values[found]));
            values[found] = value;
            return;
        }
        if (used == keys.length) {
            // Full: with half of it removed entries, closing the gaps makes room; else twice the room.
            allocate(size * 2 > keys.length ? keys.length * 2 : keys.length);
            found = find(key);
        }
        keys[used] = key;
        values[used] = value;
        slots[-1 - found] = ++used;
        size++;
    }

    /** Removes the mapping with {@code m}'s host key, if there is one. */
    void remove(PortMapping m) {
        int hostRef = 0;
        if (m.hostIp() != null) {
            int id = hostAddresses.idOf(m.hostIp());
            if (id < 0) {
                return;
            }
            hostRef = id + 1;
        }
        if (!isPort(m.hostPort())) {
            return;
        }
        int found = find(key(m, hostRef));
        if (found >= 0) {
            removeAt(found);
            shrinkIfSparse();
        }
    }

    void removeIf(Predicate<PortMapping> which) {
        for (int e = 0; e < used; e++) {
            if (keys[e] != REMOVED && which.test(mapping(e))) {
                removeAt(e);
            }
        }
        shrinkIfSparse();
    }

    /** The mappings, in the order their keys were first put. */
    List<PortMapping> toList() {
        List<PortMapping> out = new ArrayList<>(size);
        for (int e = 0; e < used; e++) {
            if (keys[e] != REMOVED) {
                out.add(mapping(e));
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** Entries it has room for before it grows. */
    int capacity() {
        return keys.length;
    }

    /** Distinct host addresses and targets held. */
    int sharedValues() {
        return hostAddresses.size() + targets.size();
    }

    private static boolean isPort(int port) {
        return port >= 0 && port <= 0xFFFF;
    }

    private static void checkPort(int port) {
        if (!isPort(port)) {
            throw new IllegalArgumentException("port " + port + " is not 0-65535");
        }
    }

    /** Family (1 bit), protocol (2), host port (16), and 0 for every address or the address's id + 1. */
    private static long key(PortMapping m, int hostRef) {
        return (m.containerIp() instanceof Inet4Address ? 1L : 0L) | (long) m.protocol().ordinal() << 1
                | (long) m.hostPort() << 3 | (long) hostRef << HOST_SHIFT;
    }

    private static int targetId(long value) {
        return (int) (value >>> PORT_BITS);
    }

    private PortMapping mapping(int e) {
        long k = keys[e];
        long v = values[e];
        int hostRef = (int) (k >>> HOST_SHIFT);
        Target t = targets.get(targetId(v));
        return new PortMapping(t.network(), PROTOCOLS[(int) (k >>> 1) & 3],
                hostRef == 0 ? null : hostAddresses.get(hostRef - 1), (int) (k >>> 3) & 0xFFFF,
                t.containerIp(), (int) v & 0xFFFF, t.owner());
    }

    /** The entry holding {@code key}, or -1 - the empty slot where it would go. */
    private int find(long key) {
        int mask = slots.length - 1;
        for (int s = (int) ((key * GOLDEN) >>> shift); ; s = (s + 1) & mask) {
            int e = slots[s] - 1;
            if (e < 0) {
                return -1 - s;
            }
            if (keys[e] == key) {
                return e;
            }
        }
    }

    private void removeAt(int e) {
        int hostRef = (int) (keys[e] >>> HOST_SHIFT);
        if (hostRef != 0) {
            hostAddresses.release(hostRef - 1);
        }
        targets.release(targetId(values[e]));
        // Its slot stays, pointing at an entry no key matches, until the next allocate.
        keys[e] = REMOVED;
        size--;
    }

    /** After many removals (a network deleted, a bulk unpublish), gives back what a quarter would not use. */
    private void shrinkIfSparse() {
        if (keys.length > MIN_CAPACITY && size * 4 < keys.length) {
            allocate(Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(size, 1)) * 2));
        }
    }

    /**
     * Room for {@code capacity} entries, with the entries there are moved in, in their order,
     * without gaps; in place when the room stays the same (a publish and unpublish of one port,
     * again and again, would otherwise make new arrays every few calls).
     */
    private void allocate(int capacity) {
        long[] oldKeys = keys;
        long[] oldValues = values;
        int oldUsed = used;
        if (keys != null && keys.length == capacity) {
            Arrays.fill(slots, 0);
        } else {
            keys = new long[capacity];
            values = new long[capacity];
            slots = new int[capacity * 2];
            shift = 64 - Integer.numberOfTrailingZeros(slots.length);
        }
        used = 0;
        for (int e = 0; e < oldUsed; e++) {
            if (oldKeys[e] != REMOVED) {
                keys[used] = oldKeys[e];
                values[used] = oldValues[e];
                slots[-1 - find(oldKeys[e])] = ++used;
            }
        }
    }
}
