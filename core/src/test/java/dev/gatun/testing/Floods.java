package dev.gatun.testing;

/** Floods of changes that tests run while a serve's driver watches: what an event socket must survive. */
public final class Floods {

    private Floods() {}

    /**
     * An nft -f script that makes table {@code ip other} with a set of {@code count} addresses
     * (10.0.0.0 on), added a thousand elements a command: another tool's churn, not gatun's.
     */
    public static String foreignTable(int count) {
        StringBuilder s = new StringBuilder("table ip other {\n  set s { type ipv4_addr; }\n}\n");
        for (int i = 0; i < count; i += 1000) {
            s.append("add element ip other s { ");
            for (int j = i; j < Math.min(count, i + 1000); j++) {
                s.append(j == i ? "" : ", ").append("10.").append(j >> 16 & 255).append('.').append(j >> 8 & 255)
                        .append('.').append(j & 255);
            }
            s.append(" }\n");
        }
        return s.toString();
    }
}
