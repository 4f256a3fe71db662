package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static dev.gatun.nft.DataType.INET_PROTO;
import static dev.gatun.nft.DataType.INET_SERVICE;
import static dev.gatun.nft.DataType.IPV4_ADDR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(FreshNamespaces.class)
class NftTransactionTest {

    private static final Table GATUN = Table.of(Family.IP, "gatun");
    private static final NftSet PORTS = NftSet.map(GATUN, "ports4", List.of(INET_PROTO, INET_SERVICE),
            List.of(IPV4_ADDR, INET_SERVICE));

    /** 100,000 distinct mappings: tcp and udp host ports 1-50,000 to container addresses. */
    private static List<Element> manyMappings() {
        List<Element> out = new ArrayList<>(100_000);
        for (int i = 0; i < 100_000; i++) {
            String proto = i % 2 == 0 ? "tcp" : "udp";
            int port = i / 2 + 1;
            out.add(Element.of(proto, Integer.toString(port))
                    .to("10.88." + (i / 250 % 250) + "." + (i % 250 + 2), "80").withComment("owner-" + i));
        }
        return out;
    }

    /** Set equality with a readable failure: the first few missing and unexpected elements. */
    private static void assertSameElements(Collection<Element> actual, Collection<Element> expected) {
        Set<Element> actualSet = new HashSet<>(actual);
        Set<Element> expectedSet = new HashSet<>(expected);
        assertThat(actualSet).as("distinct elements listed").hasSize(actual.size());
        Set<Element> missing = new HashSet<>(expectedSet);
        missing.removeAll(actualSet);
        Set<Element> extra = new HashSet<>(actualSet);
        extra.removeAll(expectedSet);
        assertThat(missing.stream().limit(3).toList()).as("missing").isEmpty();
        assertThat(extra.stream().limit(3).toList()).as("unexpected").isEmpty();
    }

    /**
     * Adjacent ranges share a boundary: the end of one (an end element) is the start of the next.
     * Given in any order, the kernel takes them only with the end element sent before the start
     * element of the same key, as nft sends them; nft's listing is the oracle.
     */
    @Test
    void adjacentRangesGivenInAnyOrderGoInOneMessage(NetworkNamespace a) {
        NftSet subnets = NftSet.of(GATUN, "subnets4", IPV4_ADDR).withFlags(SetFlag.INTERVAL);
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).add(subnets).commit();
            nft.transaction().addElements(subnets, List.of(Element.of("172.31.251.0/24"), Element.of("172.31.250.0/24"),
                    Element.of("172.31.252.0/24"))).commit();
            nft.transaction().addElements(subnets, List.of(Element.of("172.31.251.0/24"), Element.of("172.31.250.0/24")))
                    .commit();
        }
        assertThat(Oracle.in(a, "nft", "list", "set", "ip", "gatun", "subnets4").replaceAll("\\s+", " "))
                .contains("elements = { 172.31.250.0/24, 172.31.251.0/24, 172.31.252.0/24 }");
    }

    @Test
    void hundredThousandElementsInOneCommitAreAllListedBack(NetworkNamespace a) {
        List<Element> elements = manyMappings();
        try (Nftables nft = Nftables.open(a)) {
            int before = nft.generation();
            nft.transaction().add(GATUN).add(PORTS).addElements(PORTS, elements).commit();
            // One commit: the generation moved by exactly one.
            assertThat(nft.generation()).isEqualTo(before + 1);

            List<Element> listed = nft.elements(PORTS);
            assertThat(listed).hasSize(100_000);
            assertSameElements(listed, elements);
        }
        // The real nft agrees on the count.
        String out = Oracle.in(a, "nft", "list", "map", "ip", "gatun", "ports4");
        assertThat(out.split("comment \"owner-", -1).length - 1).isEqualTo(100_000);
    }

    @Test
    void deletingOneOfHundredThousandLeavesTheOthers(NetworkNamespace a) {
        List<Element> elements = manyMappings();
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).add(PORTS).addElements(PORTS, elements).commit();
            Element victim = elements.get(4242);

            nft.transaction().deleteElements(PORTS, List.of(Element.of(victim.key().toArray(String[]::new)))).commit();

            List<Element> listed = nft.elements(PORTS);
            Set<Element> expected = new HashSet<>(elements);
            expected.remove(victim);
            assertThat(listed).hasSize(99_999);
            assertSameElements(listed, expected);
            assertThat(nft.element(PORTS, Element.of(victim.key().toArray(String[]::new)))).isEmpty();
            assertThat(nft.element(PORTS, Element.of("tcp", "1"))).contains(elements.getFirst());
        }
    }

    @Test
    void exclusiveCreateOfAnExistingElementFailsTheWholeTransaction(NetworkNamespace a) {
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).add(PORTS)
                    .addElements(PORTS, List.of(Element.of("tcp", "8080").to("10.88.0.2", "80"))).commit();

            Table other = Table.of(Family.IP, "newcomer");
            Chain chain = Chain.base(other, "fwd", ChainType.FILTER, Hook.FORWARD, 0, Verdict.Code.ACCEPT);
            Transaction tx = nft.transaction().add(other).add(chain)
                    .add(Rule.in(chain).match(Field.TCP_DPORT, "22").accept().build())
                    .createElements(PORTS, List.of(Element.of("tcp", "8080").to("10.88.0.9", "80")));

            NetlinkException e = Expect.thrown(NetlinkException.class, tx::commit);

            assertThat(e.isAlreadyExists()).as(e.getMessage()).isTrue();
            assertThat(e.operation()).contains("tcp . 8080").contains("map ip gatun ports4");
            // The kernel names the element it refused (uAPI: NFTA_SET_ELEM_LIST_ELEMENTS = 3, NFTA_LIST_ELEM = 1).
            assertThat(e.rejectedAttribute()).isEqualTo("NFTA_SET_ELEM_LIST_ELEMENTS (type 3) > NFTA_LIST_ELEM (type 1)");
            assertThat(nft.list().tables()).extracting(Table::name).containsExactly("gatun");
            assertThat(nft.elements(PORTS)).containsExactly(Element.of("tcp", "8080").to("10.88.0.2", "80"));
        }
        assertThat(Oracle.in(a, "nft", "list", "tables")).doesNotContain("newcomer");
    }

    @Test
    void handlesAreReportedWhenAskedFor(NetworkNamespace a) {
        try (Nftables nft = Nftables.open(a)) {
            Chain chain = Chain.regular(GATUN, "c");
            var results = nft.transaction().withHandles().add(GATUN).add(chain)
                    .add(Rule.in(chain).counter().accept().build()).commit();

            assertThat(results).extracting(Transaction.OperationResult::operation)
                    .containsExactly("add table ip gatun", "add chain ip gatun c", "add rule in chain ip gatun c");
            Ruleset listed = nft.list();
            assertThat(results.get(1).handle()).isEqualTo(listed.chains().getFirst().handle()).isPositive();
            assertThat(results.get(2).handle()).isEqualTo(listed.rules().getFirst().handle()).isPositive();

            // A rule is deleted by that handle.
            nft.transaction().delete(listed.rules().getFirst()).commit();
            assertThat(nft.list().rules()).isEmpty();
        }
    }

    @Test
    void destroyDeletesOnlyWhatExistsAndFlushEmpties(NetworkNamespace a) {
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).add(PORTS)
                    .addElements(PORTS, List.of(Element.of("tcp", "1").to("10.0.0.1", "1"))).commit();
            nft.transaction().flush(PORTS).commit();
            assertThat(nft.elements(PORTS)).isEmpty();

            Table missing = Table.of(Family.IP6, "never_made");
            nft.transaction().destroy(missing).destroy(PORTS).commit();
            assertThat(nft.list().sets()).isEmpty();
            assertThatThrownBy(() -> nft.transaction().delete(missing).commit())
                    .isInstanceOf(NetlinkException.class).hasMessageContaining("ENOENT")
                    .hasMessageContaining("delete table ip6 never_made");
        }
    }

    /**
     * A destroy reads nothing at commit time: it is an add and a delete in the same batch, so
     * the object cannot come or go between a look and the act. One result per destroy.
     */
    @Test
    void destroyIsAnAddAndADeleteInTheSameBatch() {
        Chain chain = Chain.regular(GATUN, "c");
        Transaction tx = new Transaction(null).destroy(PORTS).destroy(chain).destroy(GATUN);

        assertThat(tx.operations()).containsExactly("destroy map ip gatun ports4", "destroy chain ip gatun c",
                "destroy table ip gatun");
        assertThat(tx.encode()).extracting(NftTransactionTest::messageType).containsExactly(
                kernel_h.NFT_MSG_NEWSET, kernel_h.NFT_MSG_DELSET, kernel_h.NFT_MSG_NEWCHAIN, kernel_h.NFT_MSG_DELCHAIN,
                kernel_h.NFT_MSG_NEWTABLE, kernel_h.NFT_MSG_DELTABLE);
    }

    /** The nftables message type (NFT_MSG_*) of one encoded message: the low byte of nlmsg_type, in host order. */
    private static int messageType(byte[] message) {
        return message[4] & 0xff;
    }

    @Test
    void destroyRemovesWhatExistsWithEverythingInItAndLeavesTheRestAlone(NetworkNamespace a) {
        Chain base = Chain.base(GATUN, "pre", ChainType.NAT, Hook.PREROUTING, Priority.DSTNAT, Verdict.Code.ACCEPT);
        Chain regular = Chain.regular(GATUN, "c");
        Table other = Table.of(Family.INET, "other");
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).add(PORTS).add(base).add(regular).add(other)
                    .addElements(PORTS, List.of(Element.of("tcp", "1").to("10.0.0.1", "1"))).commit();
            String before = Oracle.in(a, "nft", "list", "table", "inet", "other");

            // A base chain (its hook left alone by the add half), a map with elements, then a chain that is not there.
            List<Transaction.OperationResult> results = nft.transaction().destroy(base).destroy(PORTS).commit();
            assertThat(results).extracting(Transaction.OperationResult::operation)
                    .containsExactly("destroy chain ip gatun pre", "destroy map ip gatun ports4");
            assertThat(Oracle.in(a, "nft", "list", "table", "ip", "gatun")).doesNotContain("pre").doesNotContain("ports4")
                    .contains("chain c");
            nft.transaction().destroy(base).commit();

            // A whole table with what is left in it; the other table stays as it was.
            nft.transaction().add(PORTS).addElements(PORTS, List.of(Element.of("tcp", "2").to("10.0.0.2", "2"))).commit();
            nft.transaction().destroy(GATUN).commit();
            assertThat(Oracle.in(a, "nft", "list", "tables")).doesNotContain("table ip gatun");
            assertThat(Oracle.in(a, "nft", "list", "table", "inet", "other")).isEqualTo(before);

            // Nothing left to destroy: still no error, and still nothing there.
            nft.transaction().destroy(GATUN).commit();
            assertThat(Oracle.in(a, "nft", "list", "tables")).isEqualTo("table inet other\n");
        }
    }

    /** A destroy is atomic with the rest of its batch, and a guarded one needs no read to pass the guard. */
    @Test
    void aGuardedDestroyFailsWholeWhenTheRulesetChangedAndPassesWhenNot(NetworkNamespace a) {
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(GATUN).commit();
            int generation = nft.generation();
            Oracle.in(a, "nft", "add", "table", "ip", "racer");

            Transaction stale = nft.transaction().guardGeneration(generation).destroy(GATUN);
            Expect.thrown(GenerationConflictException.class, stale::commit);
            assertThat(Oracle.in(a, "nft", "list", "tables")).contains("table ip gatun");

            nft.transaction().guardGeneration(nft.generation()).destroy(GATUN).commit();
            assertThat(Oracle.in(a, "nft", "list", "tables")).isEqualTo("table ip racer\n");
        }
    }

    @Test
    void jumpToAChainThatDoesNotExistIsNamedByTheKernelError(NetworkNamespace a) {
        try (Nftables nft = Nftables.open(a)) {
            Chain chain = Chain.regular(GATUN, "c");
            Transaction tx = nft.transaction().add(GATUN).add(chain).add(Rule.in(chain).jump("nowhere").build());
            NetlinkException e = Expect.thrown(NetlinkException.class, tx::commit);
            assertThat(e.isNotFound()).as(e.getMessage()).isTrue();
            assertThat(e.operation()).isEqualTo("add rule in chain ip gatun c");
        }
        assertThat(Oracle.in(a, "nft", "list", "tables")).doesNotContain("gatun");
    }
}
