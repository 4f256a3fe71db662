package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.internal.Constants;
import dev.gatun.netlink.MalformedReplyException;

/** Where a base chain is attached in the packet path. */
public enum Hook {
    PREROUTING("prerouting", kernel_h.NF_INET_PRE_ROUTING),
    INPUT("input", kernel_h.NF_INET_LOCAL_IN),
    FORWARD("forward", kernel_h.NF_INET_FORWARD),
    OUTPUT("output", kernel_h.NF_INET_LOCAL_OUT),
    POSTROUTING("postrouting", kernel_h.NF_INET_POST_ROUTING),
    /** The netdev family's ingress hook (one device). */
    INGRESS("ingress", kernel_h.NF_NETDEV_INGRESS);

    final String keyword;
    final int number;

    Hook(String keyword, int number) {
        this.keyword = keyword;
        this.number = number;
    }

    public String keyword() {
        return keyword;
    }

    /** The kernel's hook number in this family. */
    int number(Family family) {
        if (this == INGRESS && family == Family.INET) {
            return kernel_h.NF_INET_INGRESS;
        }
        return number;
    }

    static Hook of(Family family, int number) {
        if (family == Family.NETDEV) {
            return INGRESS;
        }
        if (family == Family.INET && number == kernel_h.NF_INET_INGRESS) {
            return INGRESS;
        }
        return Constants.first(values(), h -> h != INGRESS && h.number == number)
                .orElseThrow(() -> new MalformedReplyException("hook number " + number + " is no hook gatun knows in family " + family));
    }

    public static Hook parse(String keyword) {
        return Constants.first(values(), h -> h.keyword.equals(keyword))
                .orElseThrow(() -> new InvalidInputException("unknown hook '" + keyword + "'"));
    }
}
