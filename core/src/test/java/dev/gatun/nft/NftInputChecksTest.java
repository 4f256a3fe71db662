package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.InvalidInputException;
import dev.gatun.testing.BadInput;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static dev.gatun.nft.DataType.INET_PROTO;
import static dev.gatun.nft.DataType.INET_SERVICE;
import static dev.gatun.nft.DataType.IPV4_ADDR;

/**
 * Bad input to the nftables model is refused while a change is built, before anything could be
 * sent, so no root and no kernel: one row per bad value, and the refusal names it.
 */
class NftInputChecksTest {

    private static final Table GATUN = Table.of(Family.IP, "gatun");
    private static final NftSet PORTS = NftSet.map(GATUN, "ports4", List.of(INET_PROTO, INET_SERVICE),
            List.of(IPV4_ADDR, INET_SERVICE));

    private static final NftSet INTERVAL = NftSet.of(GATUN, "nets", IPV4_ADDR).withFlags(SetFlag.INTERVAL);

    private static byte[] key(int protocol, int port) {
        return Concatenation.of(PORTS.keyType(), new byte[] {(byte) protocol}, new byte[] {(byte) (port >> 8), (byte) port});
    }

    private static byte[] data(int a, int b, int c, int d, int port) {
        return Concatenation.of(PORTS.dataType(), new byte[] {(byte) a, (byte) b, (byte) c, (byte) d},
                new byte[] {(byte) (port >> 8), (byte) port});
    }

    static Stream<BadInput> badInput() {
        return Stream.of(
                BadInput.of("a table name of 256 bytes", () -> Table.of(Family.IP, "t".repeat(256)),
                        "table name", "256 bytes", "255"),
                BadInput.of("an unknown family", () -> Family.parse("ipx"), "'ipx'"),
                BadInput.of("a key of one component for a key of two",
                        () -> ElementValues.encode(PORTS, List.of(Element.of("tcp").to("10.0.0.1", "80")), false),
                        "element tcp", "1 key components", "has 2"),
                BadInput.of("port 70000 in a key",
                        () -> ElementValues.encode(PORTS, List.of(Element.of("tcp", "70000").to("10.0.0.1", "80")), false),
                        "70000"),
                BadInput.of("an IPv4 address with 300 in it",
                        () -> ElementValues.encode(PORTS, List.of(Element.of("tcp", "80").to("10.0.0.300", "80")), false),
                        "10.0.0.300"),
                BadInput.of("an IPv6 address to match an IPv4 field",
                        () -> Rule.in(GATUN, "c").match(Field.IP_SADDR, "fd00::1"), "fd00::1"),
                BadInput.of("a reversed port range", () -> Rule.in(GATUN, "c").match(Field.TCP_DPORT, "90-80"),
                        "90-80", "reversed"),
                BadInput.of("an interface name over 15 bytes",
                        () -> Rule.in(GATUN, "c").match(Field.META_IIFNAME, "a-very-long-interface-name"),
                        "a-very-long-interface-name"),
                BadInput.of("a chain name of 300 bytes to jump to", () -> Rule.in(GATUN, "c").jump("x".repeat(300)),
                        "chain name"),
                BadInput.of("a comment with a line break", () -> Table.of(Family.IP, "t").withComment("line\\nbreak\n"),
                        "control character"),
                BadInput.of("a stored key of 3 bytes for a key of 8",
                        () -> ElementValues.stored(PORTS, List.of(new StoredElement(new byte[3], data(10, 0, 0, 1, 1), null)),
                                false),
                        "map ip gatun ports4", "8 bytes, not 3"),
                BadInput.of("a stored element of a map without data",
                        () -> ElementValues.stored(PORTS, List.of(StoredElement.key(key(6, 1))), false),
                        "element tcp . 1 in map ip gatun ports4 needs 8 bytes of data"),
                BadInput.of("a stored element with a double quote in its comment",
                        () -> ElementValues.stored(PORTS, List.of(new StoredElement(key(6, 1), data(10, 0, 0, 1, 1),
                                "bad\"quote")), false),
                        "comment of element tcp . 1 in map ip gatun ports4"),
                BadInput.of("a stored element for an interval set",
                        () -> ElementValues.stored(INTERVAL, List.of(StoredElement.key(new byte[4])), false),
                        "interval set"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInput")
    void badInputIsRefusedBeforeAnythingIsSent(BadInput bad) {
        bad.assertRefusedWith(InvalidInputException.class);
    }
}
