package dev.gatun.driver;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The packed store of wanted mappings against the map it replaces, a
 * {@code LinkedHashMap<HostKey, PortMapping>}, over runs of puts and removals drawn from a few
 * ports, addresses and owners so that keys collide, get replaced and come back often. No root.
 */
class WantedMappingsPropertiesTest {

    private static final List<InetAddress> CONTAINERS = List.of(InetAddress.ofLiteral("10.88.0.2"),
            InetAddress.ofLiteral("10.88.0.3"), InetAddress.ofLiteral("fd00::2"));
    private static final List<InetAddress> HOSTS4 = List.of(InetAddress.ofLiteral("127.0.0.1"),
            InetAddress.ofLiteral("192.0.2.10"));
    private static final List<InetAddress> HOSTS6 = List.of(InetAddress.ofLiteral("::1"),
            InetAddress.ofLiteral("fd00:1::10"));

    /** One step: put a mapping, remove by its host key, or remove every mapping of its owner. */
    enum Kind { PUT, REMOVE, REMOVE_OWNER }

    record Step(Kind kind, PortMapping mapping) {}

    @Provide
    Arbitrary<PortMapping> mappings() {
        Arbitrary<InetAddress> container = Arbitraries.of(CONTAINERS);
        Arbitrary<Integer> bound = Arbitraries.integers().between(0, 2);
        Arbitrary<Integer> port = Arbitraries.oneOf(Arbitraries.integers().between(8080, 8083),
                Arbitraries.of(0, 1, 65535));
        Arbitrary<Protocol> protocol = Arbitraries.of(Protocol.class);
        Arbitrary<String> network = Arbitraries.of("n1", "n2");
        Arbitrary<String> owner = Arbitraries.of("web-1", "web-2", "db");
        return Combinators.combine(network, protocol, bound, port, container, port, owner)
                .as((n, p, b, hostPort, c, containerPort, o) -> {
                    List<InetAddress> hosts = c instanceof Inet4Address ? HOSTS4 : HOSTS6;
                    InetAddress hostIp = b == 0 ? null : hosts.get(b - 1);
                    return new PortMapping(n, p, hostIp, hostPort, c, containerPort, o);
                });
    }

    @Provide
    Arbitrary<List<Step>> runs() {
        Arbitrary<Kind> kind = Arbitraries.frequency(Tuple.of(6, Kind.PUT), Tuple.of(3, Kind.REMOVE),
                Tuple.of(1, Kind.REMOVE_OWNER));
        return Combinators.combine(kind, mappings()).as(Step::new).list().ofMaxSize(300);
    }

    @Property(tries = 300)
    void holdsWhatTheMapItReplacesHoldsInTheSameOrder(@ForAll("runs") List<Step> run) {
        WantedMappings wanted = new WantedMappings();
        Map<PortMapping.HostKey, PortMapping> model = new LinkedHashMap<>();
        for (Step step : run) {
            PortMapping m = step.mapping();
            switch (step.kind()) {
                case PUT -> {
                    wanted.put(m);
                    model.put(m.hostKey(), m);
                }
                case REMOVE -> {
                    wanted.remove(m);
                    model.remove(m.hostKey());
                }
                case REMOVE_OWNER -> {
                    wanted.removeIf(w -> w.owner().equals(m.owner()));
                    model.values().removeIf(w -> w.owner().equals(m.owner()));
                }
            }
            assertThat(wanted.toList()).as("after %s", step).containsExactlyElementsOf(model.values());
            assertThat(wanted.size()).isEqualTo(model.size());
        }
        // Emptied, it keeps nothing of what it held.
        new ArrayList<>(model.values()).forEach(wanted::remove);
        assertThat(wanted.toList()).isEmpty();
        assertThat(wanted.sharedValues()).as("host addresses and targets still held").isZero();
    }

    /** Grows for a bulk publish, and gives the room back when the mappings go again. */
    @Test
    void manyMappingsComeAndGo() {
        WantedMappings wanted = new WantedMappings();
        Map<PortMapping.HostKey, PortMapping> model = new LinkedHashMap<>();
        InetAddress container = CONTAINERS.getFirst();
        for (int port = 1; port <= 65535; port++) {
            for (Protocol p : List.of(Protocol.TCP, Protocol.UDP)) {
                PortMapping m = new PortMapping("n1", p, port % 7 == 0 ? HOSTS4.get(1) : null, port, container,
                        65536 - port, "owner-" + port % 3);
                wanted.put(m);
                model.put(m.hostKey(), m);
            }
        }
        assertThat(wanted.toList()).containsExactlyElementsOf(model.values());
        int full = wanted.capacity();
        assertThat(wanted.sharedValues()).as("one address and three targets").isEqualTo(4);

        wanted.removeIf(m -> m.protocol() == Protocol.TCP);
        model.values().removeIf(m -> m.protocol() == Protocol.TCP);
        assertThat(wanted.toList()).containsExactlyElementsOf(model.values());
        for (PortMapping m : List.copyOf(model.values())) {
            if (m.hostPort() > 100) {
                wanted.remove(m);
                model.remove(m.hostKey());
            }
        }
        assertThat(wanted.toList()).containsExactlyElementsOf(model.values());
        assertThat(wanted.capacity()).as("room kept for 100 mappings after %d", full).isLessThan(full / 100);
    }

    @Test
    void aPortThatCannotBeOneIsRefusedAndChangesNothing() {
        WantedMappings wanted = new WantedMappings();
        PortMapping m = new PortMapping("n1", Protocol.TCP, null, 70000, CONTAINERS.getFirst(), 80, "web-1");
        assertThatThrownBy(() -> wanted.put(m)).hasMessageContaining("70000");
        assertThat(wanted.size()).isZero();
        assertThat(wanted.sharedValues()).isZero();
    }
}
