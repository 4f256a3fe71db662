package dev.gatun.rtnl;

import dev.gatun.InvalidInputException;

import java.net.Inet4Address;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;

/** A unicast Ethernet address: what a bridge or a veth end may carry. */
public final class MacAddress {

    /** Made when a MAC is first drawn: reading a link's MAC should not set up the security providers (ms in a new JVM). */
    private static final class Random {
        static final SecureRandom SOURCE = new SecureRandom();
    }
    private final byte[] bytes;

    private MacAddress(byte[] bytes) {
        this.bytes = bytes;
    }

    /** Parses "02:42:ac:11:00:02"; refuses multicast, broadcast and all-zero addresses. */
    public static MacAddress parse(String text) {
        if (text == null || !text.matches("(?i)[0-9a-f]{2}(:[0-9a-f]{2}){5}")) {
            throw new InvalidInputException("'" + text + "' is not a MAC address (six hex bytes separated by ':')");
        }
        return of(HexFormat.ofDelimiter(":").parseHex(text.toLowerCase()), text);
    }

    static MacAddress of(byte[] bytes, String asGiven) {
        if (bytes.length != 6) {
            throw new InvalidInputException("MAC address " + asGiven + " must have 6 bytes");
        }
        if ((bytes[0] & 1) != 0) {
            throw new InvalidInputException("MAC address " + asGiven + " is multicast; an interface needs a unicast address");
        }
        boolean zero = true;
        for (byte b : bytes) {
            zero &= b == 0;
        }
        if (zero) {
            throw new InvalidInputException("MAC address " + asGiven + " is all zeros");
        }
        return new MacAddress(bytes.clone());
    }

    /** The address the kernel reported, taken as it is (no unicast check). */
    static MacAddress reported(byte[] bytes) {
        return new MacAddress(bytes.clone());
    }

    /** A random locally administered unicast address (second-lowest bit of the first byte set, lowest clear). */
    public static MacAddress randomLocal() {
        byte[] b = new byte[6];
        Random.SOURCE.nextBytes(b);
        b[0] = (byte) ((b[0] & 0xfc) | 0x02);
        return new MacAddress(b);
    }

    /**
     * The locally administered address 02:42 followed by the four bytes of an IPv4 address, as
     * Docker derives a container's MAC: a new container that gets a released address gets the
     * same MAC too, so neighbours' caches for that address stay right.
     */
    public static MacAddress fromIpv4(Inet4Address ip) {
        byte[] a = ip.getAddress();
        return new MacAddress(new byte[] {0x02, 0x42, a[0], a[1], a[2], a[3]});
    }

    public byte[] toBytes() {
        return bytes.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MacAddress m && Arrays.equals(bytes, m.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return HexFormat.ofDelimiter(":").formatHex(bytes);
    }
}
