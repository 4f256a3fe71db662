package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortMapping.HostKey;
import dev.gatun.driver.Protocol;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Batches of publishes, each by an owner of its own, drawn from a few ports, addresses and
 * containers so that they collide often, planned against a store that already holds mappings of
 * one other owner, then committed (the store refuses a key added twice or deleted while absent).
 */
class PortPlannerPropertiesTest {

    private static final List<InetAddress> HOST_ADDRESSES = List.of(InetAddress.ofLiteral("192.0.2.10"),
            InetAddress.ofLiteral("fd00:1::10"));
    private static final List<InetAddress> CONTAINERS = List.of(InetAddress.ofLiteral("10.88.0.2"),
            InetAddress.ofLiteral("10.88.0.3"), InetAddress.ofLiteral("fd00::2"));

    @Provide
    Arbitrary<Publisher.Wanted> wanted() {
        Arbitrary<InetAddress> container = Arbitraries.of(CONTAINERS);
        Arbitrary<Integer> port = Arbitraries.integers().between(8080, 8083);
        Arbitrary<Protocol> protocol = Arbitraries.of(Protocol.TCP, Protocol.UDP);
        Arbitrary<Integer> bound = Arbitraries.integers().between(0, 2);
        return Combinators.combine(protocol, bound, port, container, port).as((p, b, hostPort, c, containerPort) -> {
            // A host address of the container's family, or every address.
            InetAddress hostIp = b == 0 ? null : b == 1 ? HOST_ADDRESSES.get(c instanceof Inet4Address ? 0 : 1)
                    : InetAddress.ofLiteral(c instanceof Inet4Address ? "127.0.0.1" : "::1");
            return new Publisher.Wanted(p, hostIp, hostPort, c, containerPort);
        });
    }

    @Provide
    Arbitrary<List<List<Publisher.Wanted>>> batches() {
        return wanted().list().ofMinSize(1).ofMaxSize(4).list().ofMinSize(1).ofMaxSize(6);
    }

    @Provide
    Arbitrary<List<Publisher.Wanted>> present() {
        return wanted().list().ofMaxSize(6);
    }

    @Property
    void answeredPublishesAreInTheStoreRefusedOnesLeaveNoTraceAndNoOwnersOverlap(
            @ForAll("present") List<Publisher.Wanted> present, @ForAll("batches") List<List<Publisher.Wanted>> batch) {
        InMemoryMappingStore store = new InMemoryMappingStore();
        // One owner holds what is there: its mappings may overlap each other.
        for (Publisher.Wanted w : present) {
            store.put(new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), w.containerPort(), "old"));
        }
        List<PortMapping> before = store.mappings();
        List<CommitRequest> requests = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            requests.add(new CommitRequest.Publish("n1", batch.get(i), "owner-" + i, false));
        }

        MappingStore.View view = store.begin();
        PortPlanner.BatchPlan plan = PortPlanner.plan(view, requests, HOST_ADDRESSES, List.of(), "host1");
        if (plan.changes()) {
            view.commit(plan.delete(), plan.add());
        }

        Map<HostKey, PortMapping> after = store.mappings().stream()
                .collect(Collectors.toMap(PortMapping::hostKey, m -> m));
        assertThat(after.values()).as("another owner's mappings are never moved or removed").containsAll(before);
        for (int i = 0; i < batch.size(); i++) {
            PortPlanner.Answer a = plan.answers().get(i);
            String owner = "owner-" + i;
            if (a.refused() == null) {
                assertThat(after.values()).containsAll(a.mappings());
                assertThat(a.mappings()).hasSize(batch.get(i).size()).allMatch(m -> m.owner().equals(owner));
            } else {
                assertThat(after.values()).noneMatch(m -> m.owner().equals(owner));
            }
        }
        for (PortMapping m : after.values()) {
            for (HostKey k : overlapping(m.hostKey())) {
                PortMapping o = after.get(k);
                assertThat(o == null || o.owner().equals(m.owner()) || o.owner().equals("old") && m.owner().equals("old"))
                        .as("%s overlaps %s", m, o).isTrue();
            }
        }
    }

    /**
     * The keys on the same port of the same family that overlap {@code k}: every address against
     * each of the host's addresses (an address the host lacks, like the loopback ones here, takes
     * no traffic of a port on every address).
     */
    private static Set<HostKey> overlapping(HostKey k) {
        if (k.hostIp() != null) {
            return HOST_ADDRESSES.contains(k.hostIp()) ? Set.of(new HostKey(k.ipv4(), null, k.protocol(), k.hostPort()))
                    : Set.of();
        }
        return HOST_ADDRESSES.stream().filter(a -> (a instanceof Inet4Address) == k.ipv4())
                .map(a -> new HostKey(k.ipv4(), a, k.protocol(), k.hostPort())).collect(Collectors.toSet());
    }
}
