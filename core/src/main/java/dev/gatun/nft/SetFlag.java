package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;

import java.util.EnumSet;
import java.util.Set;

/** Set flags as nft spells them. A map's MAP flag is implied by its data type. */
public enum SetFlag {
    CONSTANT("constant", kernel_h.NFT_SET_CONSTANT),
    INTERVAL("interval", kernel_h.NFT_SET_INTERVAL),
    TIMEOUT("timeout", kernel_h.NFT_SET_TIMEOUT),
    DYNAMIC("dynamic", kernel_h.NFT_SET_EVAL);

    final String keyword;
    final int bit;

    SetFlag(String keyword, int bit) {
        this.keyword = keyword;
        this.bit = bit;
    }

    public String keyword() {
        return keyword;
    }

    static int bits(Set<SetFlag> flags) {
        int b = 0;
        for (SetFlag f : flags) {
            b |= f.bit;
        }
        return b;
    }

    static Set<SetFlag> of(int bits) {
        Set<SetFlag> s = EnumSet.noneOf(SetFlag.class);
        for (SetFlag f : values()) {
            if ((bits & f.bit) != 0) {
                s.add(f);
            }
        }
        return s;
    }
}
