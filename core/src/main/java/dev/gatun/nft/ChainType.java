package dev.gatun.nft;

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
        for (ChainType t : values()) {
            if (t.keyword.equals(keyword)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown chain type " + keyword);
    }
}
