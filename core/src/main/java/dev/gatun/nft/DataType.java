package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.nft_userspace_h;
import dev.gatun.internal.Constants;
import dev.gatun.InetText;
import dev.gatun.netlink.MalformedReplyException;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * The data types of set keys and map data, numbered as nft numbers them so that what gatun
 * writes lists exactly as if nft had written it. Each knows how to turn nft's text for a value
 * into bytes and back.
 */
public enum DataType {
    VERDICT("verdict", nft_userspace_h.NFT_USERSPACE_TYPE_VERDICT, 0, nft_userspace_h.NFT_USERSPACE_BYTEORDER_INVALID),
    IPV4_ADDR("ipv4_addr", nft_userspace_h.NFT_USERSPACE_TYPE_IPADDR, 4, nft_userspace_h.NFT_USERSPACE_BYTEORDER_BIG),
    IPV6_ADDR("ipv6_addr", nft_userspace_h.NFT_USERSPACE_TYPE_IP6ADDR, 16, nft_userspace_h.NFT_USERSPACE_BYTEORDER_BIG),
    ETHER_ADDR("ether_addr", nft_userspace_h.NFT_USERSPACE_TYPE_ETHERADDR, 6, nft_userspace_h.NFT_USERSPACE_BYTEORDER_BIG),
    INET_PROTO("inet_proto", nft_userspace_h.NFT_USERSPACE_TYPE_INET_PROTOCOL, 1, nft_userspace_h.NFT_USERSPACE_BYTEORDER_BIG),
    INET_SERVICE("inet_service", nft_userspace_h.NFT_USERSPACE_TYPE_INET_SERVICE, 2, nft_userspace_h.NFT_USERSPACE_BYTEORDER_BIG),
    MARK("mark", nft_userspace_h.NFT_USERSPACE_TYPE_MARK, 4, nft_userspace_h.NFT_USERSPACE_BYTEORDER_HOST),
    IFNAME("ifname", nft_userspace_h.NFT_USERSPACE_TYPE_IFNAME, libc_h.IFNAMSIZ, nft_userspace_h.NFT_USERSPACE_BYTEORDER_HOST);

    private static final List<String> PROTOCOL_NAMES = List.of("tcp", "udp", "sctp", "icmp", "ipv6-icmp");
    private static final List<Integer> PROTOCOL_NUMBERS = List.of(libc_h.IPPROTO_TCP, libc_h.IPPROTO_UDP,
            libc_h.IPPROTO_SCTP, libc_h.IPPROTO_ICMP, libc_h.IPPROTO_ICMPV6);

    final String keyword;
    final int id;
    final int length;
    final int byteOrder;

    DataType(String keyword, int id, int length, int byteOrder) {
        this.keyword = keyword;
        this.id = id;
        this.length = length;
        this.byteOrder = byteOrder;
    }

    public String keyword() {
        return keyword;
    }

    /** Bytes of one value. */
    public int length() {
        return length;
    }

    public static DataType parse(String keyword) {
        return Constants.first(values(), t -> t.keyword.equals(keyword))
                .orElseThrow(() -> new InvalidInputException("unknown set data type '" + keyword + "'"));
    }

    static DataType ofId(int id) {
        return Constants.first(values(), t -> t.id == id)
                .orElseThrow(() -> new MalformedReplyException("nft datatype " + id + " is not one gatun knows"));
    }

    /** The protocol number for "tcp", "udp", "sctp", "icmp", "ipv6-icmp" or a number. */
    public static int protocolNumber(String text) {
        int i = PROTOCOL_NAMES.indexOf(text.toLowerCase(Locale.ROOT));
        if (i >= 0) {
            return PROTOCOL_NUMBERS.get(i);
        }
        return (int) parseNumber(text, 0, 255, "protocol");
    }

    public static String protocolName(int number) {
        int i = PROTOCOL_NUMBERS.indexOf(number);
        return i >= 0 ? PROTOCOL_NAMES.get(i) : Integer.toString(number);
    }

    /** The bytes of nft's text for one value of this type, checked. */
    public Bytes encode(String text) {
        if (text == null) {
            throw new InvalidInputException(keyword + " value must not be empty");
        }
        return switch (this) {
            case IPV4_ADDR -> Bytes.wrap(ipv4(text).getAddress());
            case IPV6_ADDR -> Bytes.wrap(ipv6(text).getAddress());
            case ETHER_ADDR -> Bytes.wrap(ether(text));
            case INET_PROTO -> Bytes.of((byte) protocolNumber(text));
            case INET_SERVICE -> {
                int port = (int) parseNumber(text, 0, 65535, "port");
                yield Bytes.of((byte) (port >> 8), (byte) port);
            }
            case MARK -> {
                long v = parseNumber(text, 0, 0xffffffffL, "mark");
                yield Bytes.wrap(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt((int) v).array());
            }
            case IFNAME -> {
                byte[] name = text.getBytes(StandardCharsets.UTF_8);
                if (name.length == 0 || name.length >= libc_h.IFNAMSIZ) {
                    throw new InvalidInputException("interface name '" + text + "' must be 1 to "
                            + (libc_h.IFNAMSIZ - 1) + " bytes");
                }
                byte[] padded = new byte[libc_h.IFNAMSIZ];
                System.arraycopy(name, 0, padded, 0, name.length);
                yield Bytes.wrap(padded);
            }
            case VERDICT -> throw new InvalidInputException("a verdict is not a byte value");
        };
    }

    /** nft's text for the bytes of one value of this type. */
    public String render(Bytes b) {
        return switch (this) {
            case IPV4_ADDR, IPV6_ADDR -> {
                try {
                    yield InetText.of(InetAddress.getByAddress(b.raw()));
                } catch (UnknownHostException e) {
                    throw new IllegalArgumentException(e);
                }
            }
            case ETHER_ADDR -> HexFormat.ofDelimiter(":").formatHex(b.raw());
            case INET_PROTO -> protocolName(b.get(0));
            case INET_SERVICE -> Integer.toString((b.get(0) << 8) | b.get(1));
            case MARK -> "0x" + String.format("%08x",
                    ByteBuffer.wrap(b.raw()).order(ByteOrder.nativeOrder()).getInt());
            case IFNAME -> {
                byte[] raw = b.raw();
                int n = 0;
                while (n < raw.length && raw[n] != 0) {
                    n++;
                }
                yield "\"" + new String(raw, 0, n, StandardCharsets.UTF_8) + "\"";
            }
            case VERDICT -> throw new IllegalArgumentException("a verdict has no bytes");
        };
    }

    static Inet4Address ipv4(String text) {
        try {
            return Inet4Address.ofLiteral(text);
        } catch (IllegalArgumentException e) {
            throw new InvalidInputException("'" + text + "' is not an IPv4 address");
        }
    }

    static Inet6Address ipv6(String text) {
        try {
            InetAddress a = InetAddress.ofLiteral(text);
            if (!(a instanceof Inet6Address v6) || !text.contains(":")) {
                throw new IllegalArgumentException();
            }
            return v6;
        } catch (IllegalArgumentException e) {
            throw new InvalidInputException("'" + text + "' is not an IPv6 address");
        }
    }

    private static byte[] ether(String text) {
        String[] parts = text.split(":");
        if (parts.length != 6) {
            throw new InvalidInputException("'" + text + "' is not a MAC address (six hex bytes separated by ':')");
        }
        byte[] b = new byte[6];
        for (int i = 0; i < 6; i++) {
            if (!parts[i].matches("[0-9a-fA-F]{1,2}")) {
                throw new InvalidInputException("'" + text + "' is not a MAC address (six hex bytes separated by ':')");
            }
            b[i] = (byte) Integer.parseInt(parts[i], 16);
        }
        return b;
    }

    static long parseNumber(String text, long min, long max, String what) {
        long v;
        try {
            v = text.startsWith("0x") ? Long.parseLong(text.substring(2), 16) : Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new InvalidInputException("'" + text + "' is not a " + what + " (a number from " + min + " to " + max + ")");
        }
        if (v < min || v > max) {
            throw new InvalidInputException(what + " " + text + " is out of range " + min + "-" + max);
        }
        return v;
    }
}
