package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Optional;

import static dev.gatun.nft.DataType.INET_PROTO;
import static dev.gatun.nft.DataType.INET_SERVICE;
import static dev.gatun.nft.DataType.IPV4_ADDR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Elements given and read as the kernel keeps them agree with nft's words, both ways. */
@ExtendWith(FreshNamespaces.class)
class StoredElementTest {

    private static final Table GATUN = Table.of(Family.IP, "gatun");
    private static final NftSet PORTS = NftSet.map(GATUN, "ports4", List.of(INET_PROTO, INET_SERVICE),
            List.of(IPV4_ADDR, INET_SERVICE));

    private static byte[] key(int protocol, int port) {
        return Concatenation.of(PORTS.keyType(), new byte[] {(byte) protocol}, new byte[] {(byte) (port >> 8), (byte) port});
    }

    private static byte[] data(int a, int b, int c, int d, int port) {
        return Concatenation.of(PORTS.dataType(), new byte[] {(byte) a, (byte) b, (byte) c, (byte) d},
                new byte[] {(byte) (port >> 8), (byte) port});
    }

    @Test
    void storedElementsListInNftsWordsAndBack(NetworkNamespace a) {
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).add(PORTS)
                    .addStored(PORTS, List.of(new StoredElement(key(6, 8080), data(10, 88, 0, 2, 80), "c1")))
                    .addElements(PORTS, List.of(Element.of("udp", "53").to("10.88.0.3", "5353").withComment("c2")))
                    .commit();

            assertThat(nft.elements(PORTS)).containsExactlyInAnyOrder(
                    Element.of("tcp", "8080").to("10.88.0.2", "80").withComment("c1"),
                    Element.of("udp", "53").to("10.88.0.3", "5353").withComment("c2"));
            List<StoredElement> stored = nft.storedElements(PORTS);
            assertThat(stored).hasSize(2);
            StoredElement udp = stored.stream().filter(e -> e.key()[0] == 17).findFirst().orElseThrow();
            assertThat(udp.key()).isEqualTo(key(17, 53));
            assertThat(udp.data()).isEqualTo(data(10, 88, 0, 3, 5353));
            assertThat(udp.comment()).isEqualTo("c2");

            Nftables.StoredFound found = nft.storedAtGeneration(List.of(
                    new Nftables.StoredLookup(PORTS, key(6, 8080)), new Nftables.StoredLookup(PORTS, key(6, 8081))));
            assertThat(found.generation()).isEqualTo(nft.generation());
            assertThat(found.found().get(0)).hasValueSatisfying(e -> {
                assertThat(e.data()).isEqualTo(data(10, 88, 0, 2, 80));
                assertThat(e.comment()).isEqualTo("c1");
            });
            assertThat(found.found().get(1)).isEqualTo(Optional.empty());

            nft.transaction().deleteStored(PORTS, List.of(StoredElement.key(key(6, 8080)))).commit();
            assertThat(nft.elements(PORTS)).extracting(Element::comment).containsExactly("c2");
        }
        // The real nft reads what the bytes said.
        assertThat(Oracle.in(a, "nft", "list", "map", "ip", "gatun", "ports4"))
                .contains("udp . 53 comment \"c2\" : 10.88.0.3 . 5353").doesNotContain("8080");
    }

    @Test
    void aFailedStoredDeleteNamesTheElementInNftsWords(NetworkNamespace a) {
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).add(PORTS).commit();
            NetlinkException e = Expect.thrown(NetlinkException.class,
                    () -> nft.transaction().deleteStored(PORTS, List.of(StoredElement.key(key(6, 8080)))).commit());
            assertThat(e.isNotFound()).as(e.getMessage()).isTrue();
            assertThat(e.operation()).isEqualTo("delete element tcp . 8080 from map ip gatun ports4");
        }
    }

    @Test
    void concatenationPadsEachOfSeveralValuesTo32Bits() {
        byte[] k = key(6, 0x1f90);
        assertThat(k).containsExactly(6, 0, 0, 0, 0x1f, (byte) 0x90, 0, 0);
        byte[][] parts = Concatenation.split(PORTS.keyType(), k);
        assertThat(parts[0]).containsExactly(6);
        assertThat(parts[1]).containsExactly(0x1f, (byte) 0x90);
        // One value alone is not padded.
        assertThat(Concatenation.of(List.of(INET_SERVICE), new byte[] {0, 80})).containsExactly(0, 80);
        assertThatThrownBy(() -> Concatenation.of(PORTS.keyType(), new byte[] {6})).hasMessageContaining("1 values");
        assertThatThrownBy(() -> Concatenation.of(PORTS.keyType(), new byte[] {6}, new byte[] {80}))
                .hasMessageContaining("inet_service value is 2 bytes, not 1");
        assertThatThrownBy(() -> Concatenation.split(PORTS.keyType(), new byte[7])).hasMessageContaining("7 bytes");
    }
}
