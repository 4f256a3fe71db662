package dev.gatun.testing;

/**
 * A golden comparison of bytes that shows where they differ: both side by side, four bytes a
 * line with their offsets, the differing lines marked, as a netlink message is read by eye.
 */
public final class ByteDiff {

    private static final int PER_LINE = 4;

    private ByteDiff() {}

    /**
     * Fails, naming {@code what} and the first differing offset, unless both are equal.
     * {@code base} is the offset of the first byte in the whole message (16 after a netlink header).
     */
    public static void assertSameBytes(String what, byte[] expected, byte[] actual, int base) {
        int first = firstDifference(expected, actual);
        if (first >= 0) {
            throw new AssertionError(what + ": the bytes differ first at offset " + (base + first) + " (expected "
                    + expected.length + " bytes, got " + actual.length + ")\n" + sideBySide(expected, actual, base));
        }
    }

    /** The first index where the two differ, or where the shorter ends; -1 when equal. */
    static int firstDifference(byte[] a, byte[] b) {
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) {
            if (a[i] != b[i]) {
                return i;
            }
        }
        return a.length == b.length ? -1 : n;
    }

    /** "offset  expected     actual" then one line per four bytes, "<--" where they differ. */
    static String sideBySide(byte[] expected, byte[] actual, int base) {
        StringBuilder s = new StringBuilder(String.format("%-6s  %-11s  %-11s%n", "offset", "expected", "actual"));
        int lines = (Math.max(expected.length, actual.length) + PER_LINE - 1) / PER_LINE;
        for (int line = 0; line < lines; line++) {
            int from = line * PER_LINE;
            String e = hex(expected, from);
            String a = hex(actual, from);
            s.append(String.format("%04x    %-11s  %-11s%s%n", base + from, e, a, e.equals(a) ? "" : "  <--"));
        }
        return s.toString();
    }

    private static String hex(byte[] bytes, int from) {
        StringBuilder s = new StringBuilder();
        for (int i = from; i < Math.min(bytes.length, from + PER_LINE); i++) {
            if (i > from) {
                s.append(' ');
            }
            s.append(String.format("%02x", bytes[i]));
        }
        return s.toString();
    }
}
