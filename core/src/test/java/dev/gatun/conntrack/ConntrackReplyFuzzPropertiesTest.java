package dev.gatun.conntrack;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.testing.ReplyFuzz;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ctnetlink decoder fed what `conntrack -L` received from the kernel, mutated (ReplyFuzz):
 * it finds the entry's original tuple (and, for a drain, its flow) or throws gatun's own exception.
 */
class ConntrackReplyFuzzPropertiesTest {

    /** Any address: the captured entry went to 10.9.0.1:80/tcp. */
    private static final List<Conntrack.NattedPort> PORTS = List.of(new Conntrack.NattedPort(false, 6, null, 80),
            new Conntrack.NattedPort(false, 6, InetAddress.ofLiteral("10.9.0.1"), 80));

    private static final Conntrack.PortIndex INDEX = Conntrack.PortIndex.of(PORTS);

    private static List<byte[]> entries() {
        return ReplyFuzz.messages("/reply-captures/conntrack-list.capture",
                t -> t == ((kernel_h.NFNL_SUBSYS_CTNETLINK << 8) | kernel_h.IPCTNL_MSG_CT_NEW));
    }

    @Provide
    Arbitrary<byte[]> mutatedEntries() {
        return ReplyFuzz.mutated(entries(), 20);
    }

    /** The entry is not destination-NATed (its status says so), so it does not match, but its tuple is read. */
    @Example
    void theSeedDecodes() {
        try (Arena arena = Arena.ofConfined()) {
            assertThat(Conntrack.tupleIfMatches(arena.allocateFrom(JAVA_BYTE, entries().getFirst()), PORTS)).isNull();
            assertThat(Conntrack.establishedNatted(arena.allocateFrom(JAVA_BYTE, entries().getFirst()))).isNull();
            assertThat(Conntrack.untranslatedTupleIfMatches(arena.allocateFrom(JAVA_BYTE, entries().getFirst()), INDEX,
                    address -> true)).as("untranslated, to 10.9.0.1:80").isNotNull();
            assertThat(Conntrack.unansweredPort(arena.allocateFrom(JAVA_BYTE, entries().getFirst()), 6,
                    kernel_h.IPS_DST_NAT)).isEqualTo(80);
        }
    }

    @Property(tries = 1000)
    void entries(@ForAll("mutatedEntries") byte[] message) {
        ReplyFuzz.decodes(message, m -> Conntrack.tupleIfMatches(m, PORTS));
        ReplyFuzz.decodes(message, Conntrack::establishedNatted);
        ReplyFuzz.decodes(message, m -> Conntrack.untranslatedTupleIfMatches(m, INDEX, address -> true));
        ReplyFuzz.decodes(message, m -> Conntrack.unansweredPort(m, 6, kernel_h.IPS_DST_NAT | kernel_h.IPS_SEEN_REPLY));
    }
}
