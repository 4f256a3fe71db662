package dev.gatun.rtnl;

import dev.gatun.InvalidInputException;
import dev.gatun.InetText;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** An address with a prefix length, "10.88.0.1/16" or "fd00::1/64". */
public record Prefix(InetAddress address, int length) {

    public Prefix {
        int max = address instanceof Inet4Address ? 32 : 128;
        if (length < 0 || length > max) {
            throw new InvalidInputException("prefix length " + length + " of " + InetText.of(address)
                    + " is out of range 0-" + max);
        }
    }

    public static Prefix parse(String text) {
        int slash = text == null ? -1 : text.indexOf('/');
        if (slash < 0) {
            throw new InvalidInputException("'" + text + "' is not an address with a prefix length, such as 10.88.0.1/16");
        }
        InetAddress a = address(text.substring(0, slash));
        int length;
        try {
            length = Integer.parseInt(text.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new InvalidInputException("'" + text + "' has no valid prefix length");
        }
        return new Prefix(a, length);
    }

    /** Parses a literal IPv4 or IPv6 address, never a host name. */
    public static InetAddress address(String text) {
        try {
            return InetAddress.ofLiteral(text);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new InvalidInputException("'" + text + "' is not an IPv4 or IPv6 address");
        }
    }

    public boolean isIpv6() {
        return address instanceof Inet6Address;
    }

    /** The network part: the address with the host bits cleared. */
    public Prefix network() {
        byte[] b = address.getAddress();
        for (int i = length; i < b.length * 8; i++) {
            b[i / 8] &= (byte) ~(0x80 >>> (i % 8));
        }
        try {
            return new Prefix(InetAddress.getByAddress(b), length);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether {@code a} is of this prefix's family and shares its first {@code length} bits.
     * Compared byte by byte: every publish checks its container address so, and building two
     * networks to compare them was most of a cold publish's address work.
     */
    public boolean contains(InetAddress a) {
        byte[] x = a.getAddress();
        byte[] y = address.getAddress();
        if (x.length != y.length) {
            return false;
        }
        int whole = length / 8;
        for (int i = 0; i < whole; i++) {
            if (x[i] != y[i]) {
                return false;
            }
        }
        int rest = length % 8;
        int mask = (0xff00 >>> rest) & 0xff;
        return rest == 0 || (x[whole] & mask) == (y[whole] & mask);
    }

    @Override
    public String toString() {
        return InetText.of(address) + "/" + length;
    }
}
