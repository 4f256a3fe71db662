package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;

import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The kernel's NF_NAT_RANGE_* flags of nat, masq and redir, with the word nft prints for the
 * ones a user writes ({@code random}, {@code fully-random}, {@code persistent}); the others
 * nft derives from the rest of the statement.
 */
public enum NatFlag {
    MAP_IPS(kernel_h.NF_NAT_RANGE_MAP_IPS, null),
    PROTO_SPECIFIED(kernel_h.NF_NAT_RANGE_PROTO_SPECIFIED, null),
    PROTO_RANDOM(kernel_h.NF_NAT_RANGE_PROTO_RANDOM, "random"),
    PERSISTENT(kernel_h.NF_NAT_RANGE_PERSISTENT, "persistent"),
    PROTO_RANDOM_FULLY(kernel_h.NF_NAT_RANGE_PROTO_RANDOM_FULLY, "fully-random"),
    PROTO_OFFSET(kernel_h.NF_NAT_RANGE_PROTO_OFFSET, null),
    NETMAP(kernel_h.NF_NAT_RANGE_NETMAP, null);

    public final int bit;
    /** How nft writes the flag, or null where nft has no word for it. */
    public final String keyword;

    NatFlag(int bit, String keyword) {
        this.bit = bit;
        this.keyword = keyword;
    }

    /** No flags. */
    public static Set<NatFlag> none() {
        return Set.of();
    }

    /** An unmodifiable copy, so that records holding flags stay values. */
    public static Set<NatFlag> copyOf(Collection<NatFlag> flags) {
        EnumSet<NatFlag> copy = EnumSet.noneOf(NatFlag.class);
        copy.addAll(flags);
        return Collections.unmodifiableSet(copy);
    }

    public static int bits(Set<NatFlag> flags) {
        int bits = 0;
        for (NatFlag f : flags) {
            bits |= f.bit;
        }
        return bits;
    }

    /** The flags of {@code bits}; a bit without a name is an IllegalArgumentException, as for other unnamed kernel values. */
    public static Set<NatFlag> of(int bits) {
        EnumSet<NatFlag> flags = EnumSet.noneOf(NatFlag.class);
        int named = 0;
        for (NatFlag f : values()) {
            if ((bits & f.bit) != 0) {
                flags.add(f);
                named |= f.bit;
            }
        }
        if (named != bits) {
            throw new IllegalArgumentException("nat flags 0x" + Integer.toHexString(bits & ~named) + " have no name");
        }
        return Collections.unmodifiableSet(flags);
    }
}
