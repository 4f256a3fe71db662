package dev.gatun.nft;

import dev.gatun.internal.Constants;
import dev.gatun.netlink.MalformedReplyException;
/** The type of a base chain, which decides what its rules may do. */
public enum ChainType {
    FILTER("filter"), NAT("nat"), ROUTE("route");

    final String keyword;

    ChainType(String keyword) {
        this.keyword = keyword;
    }

    public String keyword() {
        return keyword;
    }

    static ChainType parse(String keyword) {
        return Constants.first(values(), t -> t.keyword.equals(keyword))
                .orElseThrow(() -> new MalformedReplyException("a base chain of type '" + keyword + "', which gatun does not know"));
    }
}
