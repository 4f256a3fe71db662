package dev.gatun.driver.foreign;

import dev.gatun.InvalidInputException;

/**
 * The packet-mark bits gatun's forward chain sets on traffic it accepts, so that another
 * nftables table, which gatun never edits, can let that traffic through with one rule of its
 * own. Configured with the system property {@code gatun.acceptMark} or the environment
 * variable {@code GATUN_ACCEPT_MARK} (for example {@code 0x2000}); the default bit, 0x2000,
 * is one that kube-proxy, Docker and Cilium leave alone.
 */
public final class AcceptMark {

    public static final int DEFAULT = 0x2000;

    private AcceptMark() {}

    /** The configured bits. */
    public static int bits() {
        String text = System.getProperty("gatun.acceptMark", System.getenv("GATUN_ACCEPT_MARK"));
        return text == null || text.isBlank() ? DEFAULT : parse(text.strip());
    }

    static int parse(String text) {
        long value;
        try {
            value = text.startsWith("0x") || text.startsWith("0X") ? Long.parseLong(text.substring(2), 16)
                    : Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new InvalidInputException("accept mark '" + text + "' is not a number (GATUN_ACCEPT_MARK, such as 0x2000)");
        }
        if (value <= 0 || value > 0xffffffffL) {
            throw new InvalidInputException("accept mark '" + text + "' must be a non-zero 32-bit mask");
        }
        return (int) value;
    }

    /** The mark as nft writes it: 0x00002000. */
    public static String hex(int bits) {
        return String.format("0x%08x", bits);
    }

    /** The rule that accepts gatun's traffic in another table's chain, as the user types it. */
    public static String acceptRule(String family, String table, String chain, int bits) {
        return "nft insert rule " + family + " " + table + " " + chain + " meta mark & " + hex(bits) + " == " + hex(bits)
                + " accept";
    }
}
