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

    /**
     * An nft -f script that makes table {@code ip flood} with one chain of {@code count} rules,
     * in one transaction: a burst of notifications that overruns a watcher's event socket (on
     * kernel 6.18 a foreign set's 300,000 elements do not, 50,000 rules do).
     */
    public static String foreignRules(int count) {
        StringBuilder s = new StringBuilder("table ip flood {\n  chain c { }\n}\n");
        for (int i = 0; i < count; i++) {
            s.append("add rule ip flood c ip saddr 10.").append(i >> 16 & 255).append('.').append(i >> 8 & 255)
                    .append('.').append(i & 255).append(" counter accept\n");
        }
        return s.toString();
    }
}
