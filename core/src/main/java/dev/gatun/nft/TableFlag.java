package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;

import java.util.EnumSet;
import java.util.Set;

/**
 * Table flags. PERSIST is not offered: the uAPI headers gatun is built against (Linux 6.1)
 * do not declare it.
 */
public enum TableFlag {
    /** The table exists but its chains are not hooked in. */
    DORMANT("dormant", kernel_h.NFT_TABLE_F_DORMANT),
    /** The table belongs to the netlink socket that made it and goes away with it. */
    OWNER("owner", kernel_h.NFT_TABLE_F_OWNER);

    final String keyword;
    final int bit;

    TableFlag(String keyword, int bit) {
        this.keyword = keyword;
        this.bit = bit;
    }

    public String keyword() {
        return keyword;
    }

    static int bits(Set<TableFlag> flags) {
        int b = 0;
        for (TableFlag f : flags) {
            b |= f.bit;
        }
        return b;
    }

    static Set<TableFlag> of(int bits) {
        Set<TableFlag> s = EnumSet.noneOf(TableFlag.class);
        for (TableFlag f : values()) {
            if ((bits & f.bit) != 0) {
                s.add(f);
            }
        }
        return s;
    }
}
