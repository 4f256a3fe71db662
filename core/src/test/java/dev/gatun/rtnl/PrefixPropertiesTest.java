package dev.gatun.rtnl;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;

import static org.assertj.core.api.Assertions.assertThat;

class PrefixPropertiesTest {

    /** Two addresses that often share a long run of leading bits, of either family. */
    @Provide
    Arbitrary<InetAddress[]> pairs() {
        Arbitrary<Integer> width = Arbitraries.of(4, 16);
        return width.flatMap(w -> {
            Arbitrary<byte[]> bytes = Arbitraries.bytes().array(byte[].class).ofSize(w);
            Arbitrary<Integer> shared = Arbitraries.integers().between(0, w * 8);
            Arbitrary<Boolean> otherFamily = Arbitraries.of(true, false, false, false);
            return Combinators.combine(bytes, bytes, shared, otherFamily).as((a, b, keep, other) -> {
                byte[] second = other ? new byte[w == 4 ? 16 : 4] : b.clone();
                if (!other) {
                    // The first `keep` bits of b come from a.
                    for (int i = 0; i < keep; i++) {
                        int bit = 0x80 >>> (i % 8);
                        second[i / 8] = (byte) ((second[i / 8] & ~bit) | (a[i / 8] & bit));
                    }
                } else {
                    second[0] = 0x20; // not an IPv4-mapped IPv6 address, which Java turns into IPv4
                }
                return new InetAddress[] {address(a), address(second)};
            });
        });
    }

    @Property
    void containsIsSameFamilyAndTheFirstLengthBits(@ForAll("pairs") InetAddress[] pair,
                                                   @ForAll("lengths") int anyLength) {
        InetAddress base = pair[0];
        InetAddress candidate = pair[1];
        int width = base.getAddress().length * 8;
        int length = anyLength % (width + 1);
        boolean sameFamily = base.getAddress().length == candidate.getAddress().length;
        boolean expected = sameFamily && new BigInteger(1, base.getAddress()).shiftRight(width - length)
                .equals(new BigInteger(1, candidate.getAddress()).shiftRight(width - length));
        assertThat(new Prefix(base, length).contains(candidate)).as("%s/%d contains %s", base, length, candidate)
                .isEqualTo(expected);
    }

    @Provide
    Arbitrary<Integer> lengths() {
        return Arbitraries.integers().between(0, 128);
    }

    private static InetAddress address(byte[] b) {
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
