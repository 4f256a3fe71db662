package dev.gatun.nft;

import dev.gatun.nft.value.Verdict;
import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Family;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tables, chains, sets and elements written into the messages gatun sends and read back as a
 * dump reads them (through libnftnl) come back equal; no kernel needed. Expressions have theirs
 * in NftExprRoundTripTest.
 */
class NftObjectRoundTripPropertiesTest {

    private static final List<Family> FAMILIES = List.of(Family.IP, Family.IP6, Family.INET);

    @Provide
    Arbitrary<String> names() {
        return Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9').withChars('_', '-', '.')
                .ofMinLength(1).ofMaxLength(NftNames.MAX_NAME_BYTES).filter(s -> Character.isLetter(s.charAt(0)));
    }

    @Provide
    Arbitrary<String> comments() {
        return Arbitraries.strings().withCharRange(' ', '~').excludeChars('"').ofMaxLength(NftNames.MAX_COMMENT_BYTES).injectNull(0.3);
    }

    @Provide
    Arbitrary<Table> tables() {
        return Combinators.combine(Arbitraries.of(Family.values()), names(), comments(),
                Arbitraries.of(TableFlag.values()).set().ofMaxSize(2))
                .as((f, n, c, flags) -> new Table(f, n, flags, c, 0));
    }

    @Provide
    Arbitrary<Chain> chains() {
        Arbitrary<Chain.Base> base = Combinators.combine(Arbitraries.of(Hook.PREROUTING, Hook.INPUT, Hook.FORWARD,
                        Hook.OUTPUT, Hook.POSTROUTING), Arbitraries.integers(), Arbitraries.of(Verdict.Code.ACCEPT,
                        Verdict.Code.DROP))
                .as((hook, priority, policy) -> new Chain.Base(ChainType.FILTER, hook, priority, policy, null));
        return Combinators.combine(Arbitraries.of(FAMILIES), names(), names(), base.injectNull(0.3), comments())
                .as((f, t, n, b, c) -> new Chain(f, t, n, b, c, 0));
    }

    @Provide
    Arbitrary<NftSet> sets() {
        Arbitrary<List<DataType>> key = Arbitraries.of(DataType.IPV4_ADDR, DataType.IPV6_ADDR, DataType.INET_PROTO,
                DataType.INET_SERVICE, DataType.MARK, DataType.IFNAME, DataType.ETHER_ADDR).list().ofMinSize(1).ofMaxSize(3);
        Arbitrary<List<DataType>> data = Arbitraries.oneOf(Arbitraries.just(List.of()), Arbitraries.just(List.of(DataType.VERDICT)),
                Arbitraries.of(DataType.IPV4_ADDR, DataType.INET_SERVICE, DataType.MARK).list().ofMinSize(1).ofMaxSize(2));
        Arbitrary<Duration> timeout = Arbitraries.longs().between(1, 86_400_000).map(Duration::ofMillis).injectNull(0.5);
        return Combinators.combine(Arbitraries.of(FAMILIES), names(), names(), key, data, timeout, comments(),
                        Arbitraries.of(SetFlag.CONSTANT, SetFlag.INTERVAL).set().ofMaxSize(2))
                .as((f, t, n, k, d, to, c, flags) -> {
                    Set<SetFlag> all = new HashSet<>(flags);
                    if (k.size() > 1) {
                        all.remove(SetFlag.INTERVAL);
                    }
                    if (to != null) {
                        all.add(SetFlag.TIMEOUT);
                    }
                    return new NftSet(f, t, n, k, d, all, to, c, 0);
                });
    }

    @Property(tries = 300)
    void tables(@ForAll("tables") Table table) {
        assertThat(readBack(new Transaction(null).add(table), TableCodec::read)).isEqualTo(table);
    }

    @Property(tries = 300)
    void chains(@ForAll("chains") Chain chain) {
        assertThat(readBack(new Transaction(null).add(chain), ChainCodec::read)).isEqualTo(chain);
    }

    @Property(tries = 300)
    void sets(@ForAll("sets") NftSet set) {
        assertThat(readBack(new Transaction(null).add(set), SetCodec::read)).isEqualTo(set);
    }

    /** Map elements of gatun's own shape: address . protocol . port to address . port, with an owner. */
    @Provide
    Arbitrary<List<Element>> elements() {
        Arbitrary<String> address = Arbitraries.integers().between(0, 255).list().ofSize(4)
                .map(b -> b.stream().map(String::valueOf).reduce((x, y) -> x + "." + y).orElseThrow());
        Arbitrary<String> port = Arbitraries.integers().between(1, 65535).map(String::valueOf);
        Arbitrary<Element> element = Combinators.combine(address, Arbitraries.of("tcp", "udp", "sctp"), port, address, port,
                        comments())
                .as((a, proto, p, to, top, c) -> new Element(List.of(a, proto, p), List.of(to, top), null, null, c));
        return element.list().ofMinSize(1).ofMaxSize(50).uniqueElements(Element::key);
    }

    @Property(tries = 200)
    void elements(@ForAll("elements") List<Element> elements) {
        Table table = Table.of(Family.IP, "gatun");
        NftSet map = NftSet.map(table, "hostip4", List.of(DataType.IPV4_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE),
                List.of(DataType.IPV4_ADDR, DataType.INET_SERVICE));
        List<ElementCodec.Encoded> read = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            for (byte[] m : new Transaction(null).addElements(map, elements).encode()) {
                read.addAll(ElementCodec.read(arena.allocateFrom(JAVA_BYTE, asDumped(m))));
            }
        }
        assertThat(ElementValues.decode(map, read)).containsExactlyInAnyOrderElementsOf(elements);
    }

    /**
     * A NEWSETELEM request as the kernel's dump would list the same elements: libnftnl numbers
     * the elements of a request 1, 2, 3... (the kernel takes any type there), the kernel lists
     * each as NFTA_LIST_ELEM, and libnftnl parses only that.
     */
    private static byte[] asDumped(byte[] request) {
        byte[] m = request.clone();
        ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.nativeOrder());
        int offset = 20;
        while (offset + 4 <= m.length) {
            int len = Short.toUnsignedInt(b.getShort(offset));
            if ((Short.toUnsignedInt(b.getShort(offset + 2)) & kernel_h.NLA_TYPE_MASK) == kernel_h.NFTA_SET_ELEM_LIST_ELEMENTS) {
                for (int inner = offset + 4; inner + 4 <= offset + len; inner += NetlinkMessages.align(b.getShort(inner))) {
                    b.putShort(inner + 2, (short) (kernel_h.NFTA_LIST_ELEM | kernel_h.NLA_F_NESTED));
                }
            }
            offset += NetlinkMessages.align(len);
        }
        return m;
    }

    private static <T> T readBack(Transaction t, Function<MemorySegment, T> read) {
        try (Arena arena = Arena.ofConfined()) {
            return read.apply(arena.allocateFrom(JAVA_BYTE, t.encode().getFirst()));
        }
    }
}
