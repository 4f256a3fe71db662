package dev.gatun.driver.bridge;

import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.rtnl.Prefix;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The allocator against a model written here with BigInteger ranges: a subnet is the numbers
 * from its network address to its last address, its hosts all of them but the network
 * address and (IPv4, more than two addresses) the last. No kernel, no root.
 */
class SubnetAllocatorPropertiesTest {

    /** A small subnet of either family with some of its own and some foreign addresses taken. */
    record Case(Prefix subnet, List<InetAddress> taken) {}

    @Property(tries = 200)
    void everyAllocationIsTheLowestFreeHostUntilAClearExhaustion(@ForAll("smallSubnets") Case c) {
        SubnetAllocator allocator = new SubnetAllocator("n1", c.subnet(), c.taken());
        List<BigInteger> got = new ArrayList<>();
        GatunException end = null;
        for (int i = 0; i <= 256; i++) {
            try {
                got.add(value(allocator.next()));
            } catch (GatunException e) {
                end = e;
                break;
            }
        }
        // The model: offsets 1 .. size-2 of the subnet, less what was taken, in ascending order
        // (an address of the other family has a value far outside the subnet's range).
        BigInteger start = start(c.subnet());
        BigInteger size = BigInteger.ONE.shiftLeft(width(c.subnet()) - c.subnet().length());
        Set<BigInteger> taken = new TreeSet<>();
        c.taken().forEach(a -> taken.add(value(a)));
        List<BigInteger> expected = new ArrayList<>();
        for (BigInteger i = BigInteger.ONE; i.compareTo(size.subtract(BigInteger.ONE)) < 0; i = i.add(BigInteger.ONE)) {
            BigInteger a = start.add(i);
            if (!taken.contains(a)) {
                expected.add(a);
            }
        }
        assertThat(got).as("allocations in %s", c.subnet()).containsExactlyElementsOf(expected);
        assertThat(end).isInstanceOf(ConflictException.class).hasMessageContaining(c.subnet().network().toString())
                .hasMessageContaining("n1");
    }

    @Property
    void anAllocationIsInsideAHostAddressAndNeverTaken(@ForAll("anySubnets") Case c) {
        SubnetAllocator allocator = new SubnetAllocator("n1", c.subnet(), c.taken());
        InetAddress a;
        try {
            a = allocator.next();
        } catch (ConflictException full) {
            return;
        }
        BigInteger v = value(a);
        assertThat(c.subnet().contains(a)).isTrue();
        assertThat(v).isNotEqualTo(start(c.subnet())).isNotEqualTo(end(c.subnet()));
        assertThat(c.taken()).doesNotContain(a);
        assertThat(allocator.isHostAddress(a)).isTrue();
    }

    @Property
    void aClaimSucceedsExactlyForAFreeHostAddressAndOnlyOnce(@ForAll("anySubnets") Case c,
                                                             @ForAll("addressesNear") InetAddress[] near) {
        InetAddress ip = near[c.subnet().isIpv6() ? 1 : 0];
        SubnetAllocator allocator = new SubnetAllocator("n1", c.subnet(), c.taken());
        Throwable thrown = catchThrowable(() -> allocator.claim(ip));
        if (!modelIsHost(c.subnet(), ip)) {
            assertThat(thrown).isInstanceOf(InvalidInputException.class).hasMessageContaining("not a host address");
        } else if (c.taken().contains(ip)) {
            assertThat(thrown).isInstanceOf(ConflictException.class).hasMessageContaining("already in use");
        } else {
            assertThat(thrown).isNull();
            assertThatThrownBy(() -> allocator.claim(ip)).isInstanceOf(ConflictException.class);
        }
    }

    @Property
    void theDefaultGatewayIsTheFirstAddressAfterTheNetworkAddress(@ForAll("anySubnets") Case c) {
        BigInteger size = BigInteger.ONE.shiftLeft(width(c.subnet()) - c.subnet().length());
        if (size.equals(BigInteger.ONE)) {
            assertThatThrownBy(() -> SubnetAllocator.gateway("n1", c.subnet(), null))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining(c.subnet().network().toString());
            return;
        }
        InetAddress gw = SubnetAllocator.gateway("n1", c.subnet(), null);
        assertThat(value(gw)).isEqualTo(start(c.subnet()).add(BigInteger.ONE));
        assertThat(c.subnet().contains(gw)).isTrue();
    }

    @Property
    void aGivenGatewayIsKeptWhenAHostAddressOfTheSubnet(@ForAll("anySubnets") Case c,
                                                       @ForAll("addressesNear") InetAddress[] near) {
        InetAddress given = near[c.subnet().isIpv6() ? 1 : 0];
        BigInteger v = value(given);
        // IPv4 subnets of four addresses or more have a broadcast address, their last.
        boolean broadcast = !c.subnet().isIpv6() && c.subnet().length() <= 30 && v.equals(end(c.subnet()));
        boolean ok = v.compareTo(start(c.subnet())) > 0 && v.compareTo(end(c.subnet())) <= 0 && !broadcast;
        if (ok) {
            assertThat(SubnetAllocator.gateway("n1", c.subnet(), given)).isEqualTo(given);
        } else {
            assertThatThrownBy(() -> SubnetAllocator.gateway("n1", c.subnet(), given))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("n1");
        }
    }

    @Property
    void theBroadcastIsTheLastAddressOfAnIpv4SubnetOfFourOrMore(@ForAll("anySubnets") Case c) {
        InetAddress b = SubnetAllocator.broadcast(c.subnet());
        boolean has = !c.subnet().isIpv6() && c.subnet().length() <= 30;
        if (has) {
            assertThat(value(b)).isEqualTo(end(c.subnet()));
        } else {
            assertThat(b).isNull();
        }
    }

    @Property
    void overlapIsSymmetricAndMeansTheRangesShareAnAddress(@ForAll("subnetPairs") Prefix[] pair) {
        Prefix a = pair[0];
        Prefix b = pair[1];
        boolean model = a.isIpv6() == b.isIpv6()
                && start(a).compareTo(end(b)) <= 0 && start(b).compareTo(end(a)) <= 0;
        assertThat(SubnetAllocator.overlaps(a, b)).as("%s overlaps %s", a, b).isEqualTo(model);
        assertThat(SubnetAllocator.overlaps(b, a)).isEqualTo(model);
    }

    // ------------------------------------------------------------------ generators

    @Provide
    Arbitrary<Case> smallSubnets() {
        return cases(Arbitraries.integers().between(24, 32), Arbitraries.integers().between(120, 128));
    }

    @Provide
    Arbitrary<Case> anySubnets() {
        return cases(Arbitraries.integers().between(0, 32), Arbitraries.integers().between(0, 128));
    }

    private Arbitrary<Case> cases(Arbitrary<Integer> v4Lengths, Arbitrary<Integer> v6Lengths) {
        Arbitrary<Prefix> subnets = Arbitraries.oneOf(
                Combinators.combine(v4(), v4Lengths).as(Prefix::new),
                Combinators.combine(v6(), v6Lengths).as(Prefix::new));
        return subnets.flatMap(s -> {
            // Taken: addresses at small offsets from the subnet's start (often inside it), and
            // now and then one of the other family.
            Arbitrary<InetAddress> inside = Arbitraries.integers().between(0, 300)
                    .map(i -> address(start(s).add(BigInteger.valueOf(i)), s.isIpv6()));
            Arbitrary<InetAddress> any = Arbitraries.frequencyOf(
                    Tuple.of(9, inside), Tuple.of(1, s.isIpv6() ? v4() : v6()));
            return any.list().ofMaxSize(40).map(t -> new Case(s, t));
        });
    }

    /** An IPv4 and an IPv6 address, each often close to the ends of the generated subnets. */
    @Provide
    Arbitrary<InetAddress[]> addressesNear() {
        return Combinators.combine(v4(), v6()).as((a, b) -> new InetAddress[] {a, b});
    }

    @Provide
    Arbitrary<Prefix[]> subnetPairs() {
        Arbitrary<Prefix[]> v4 = Combinators.combine(v4(), Arbitraries.integers().between(0, 32), Arbitraries.integers()
                .between(0, 32), Arbitraries.integers().between(0, 32)).as((a, la, lb, shared) ->
                new Prefix[] {new Prefix(a, la), new Prefix(sharing(a, shared), lb)});
        Arbitrary<Prefix[]> v6 = Combinators.combine(v6(), Arbitraries.integers().between(0, 128), Arbitraries.integers()
                .between(0, 128), Arbitraries.integers().between(8, 128)).as((a, la, lb, shared) ->
                new Prefix[] {new Prefix(a, la), new Prefix(sharing(a, shared), lb)});
        Arbitrary<Prefix[]> mixed = Combinators.combine(v4(), v6(), Arbitraries.integers().between(0, 32))
                .as((a, b, l) -> new Prefix[] {new Prefix(a, l), new Prefix(b, l * 4)});
        return Arbitraries.frequencyOf(Tuple.of(5, v4), Tuple.of(5, v6),
                Tuple.of(1, mixed));
    }

    /** Addresses with few distinct bits, so that ranges meet, nest and touch often. */
    private static Arbitrary<InetAddress> v4() {
        return Arbitraries.of(0, 1, 2, 3, 127, 128, 254, 255).array(int[].class).ofSize(4).map(b -> {
            byte[] out = new byte[4];
            for (int i = 0; i < 4; i++) {
                out[i] = (byte) b[i];
            }
            return address(out);
        });
    }

    private static Arbitrary<InetAddress> v6() {
        return Arbitraries.of(0, 1, 2, 127, 128, 255).array(int[].class).ofSize(15).map(b -> {
            byte[] out = new byte[16];
            // fd00::/8: never an IPv4-mapped address, which Java would turn into IPv4.
            out[0] = (byte) 0xfd;
            for (int i = 0; i < 15; i++) {
                out[i + 1] = (byte) b[i];
            }
            return address(out);
        });
    }

    /** {@code a} with the bits after the first {@code shared} flipped. */
    private static InetAddress sharing(InetAddress a, int shared) {
        byte[] b = a.getAddress();
        for (int i = shared; i < b.length * 8; i += 3) {
            b[i / 8] ^= (byte) (0x80 >>> (i % 8));
        }
        return address(b);
    }

    // ------------------------------------------------------------------ the model

    private static boolean modelIsHost(Prefix subnet, InetAddress ip) {
        if (ip.getAddress().length != subnet.address().getAddress().length) {
            return false;
        }
        BigInteger v = value(ip);
        boolean inside = v.compareTo(start(subnet)) >= 0 && v.compareTo(end(subnet)) <= 0;
        boolean broadcast = !subnet.isIpv6() && subnet.length() <= 30 && v.equals(end(subnet));
        return inside && !v.equals(start(subnet)) && !broadcast;
    }

    private static BigInteger start(Prefix p) {
        int hostBits = width(p) - p.length();
        return value(p.address()).shiftRight(hostBits).shiftLeft(hostBits);
    }

    private static BigInteger end(Prefix p) {
        return start(p).add(BigInteger.ONE.shiftLeft(width(p) - p.length())).subtract(BigInteger.ONE);
    }

    private static int width(Prefix p) {
        return p.address().getAddress().length * 8;
    }

    private static BigInteger value(InetAddress a) {
        return new BigInteger(1, a.getAddress());
    }

    private static InetAddress address(BigInteger v, boolean v6) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[v6 ? 16 : 4];
        int copy = Math.min(raw.length, out.length);
        System.arraycopy(raw, raw.length - copy, out, out.length - copy, copy);
        return address(out);
    }

    private static InetAddress address(byte[] b) {
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
