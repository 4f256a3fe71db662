package dev.gatun.cli.dockerd;

import dev.gatun.driver.ConflictException;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.OutsideChange;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortRequest;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.StandInDriver;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** What the reconciler asks the driver, for what a container holds and what dockerd recorded; no kernel needed. */
class PortsReconcilerTest {

    private static final InetAddress C = Prefix.address("172.17.0.2");
    private static final InetAddress C6 = Prefix.address("fd00::2");
    private final List<String> calls = new ArrayList<>();
    private final List<String> lines = new ArrayList<>();
    private final List<HostPortCheck> checks = new ArrayList<>();

    /**
     * A driver that records each change ("change OWNER -IP [specs] +IP [specs]") and each lone
     * publish, and answers a change's parts with {@code refuse} (null: done, with one mapping per port).
     */
    private PortsReconciler reconciler(Function<PortSpec, RuntimeException> refuse) {
        return new PortsReconciler(StandInDriver.answering(Map.of(
                "changeOutside", a -> {
                    OutsideChange c = (OutsideChange) a[0];
                    checks.add(c.check());
                    StringBuilder call = new StringBuilder("change " + c.owner());
                    List<OutsideChange.Outcome> out = new ArrayList<>();
                    c.unpublish().forEach((ip, specs) -> {
                        call.append(" -").append(ip.getHostAddress()).append(' ').append(specs);
                        out.add(new OutsideChange.Outcome(ip, false, List.of(mapping(ip, 1)), null));
                    });
                    c.publish().forEach((ip, specs) -> {
                        call.append(" +").append(ip.getHostAddress()).append(' ').append(specs);
                        RuntimeException refused = specs.stream().map(refuse).filter(e -> e != null).findFirst().orElse(null);
                        out.add(new OutsideChange.Outcome(ip, true, refused != null ? null
                                : specs.stream().map(p -> mapping(ip, p.hostStart())).toList(), refused));
                    });
                    calls.add(call.toString());
                    return out;
                },
                "publishOutside", a -> {
                    PortRequest r = (PortRequest) a[0];
                    checks.add((HostPortCheck) a[1]);
                    calls.add("publish " + r.ports());
                    PortSpec p = r.ports().getFirst();
                    RuntimeException refused = refuse.apply(p);
                    if (refused != null) {
                        throw refused;
                    }
                    return List.of(mapping(r.containerIp(), p.hostStart()));
                })), lines::add);
    }

    private PortsReconciler reconciler() {
        return reconciler(p -> null);
    }

    private static PortMapping mapping(InetAddress ip, int hostPort) {
        return new PortMapping(null, Protocol.TCP, null, hostPort, ip, 80, "docker:aa");
    }

    private static PortMapping held(int hostPort, int containerPort) {
        return new PortMapping(null, Protocol.TCP, null, hostPort, C, containerPort, "docker:aa");
    }

    private static ContainerPorts wanting(String... specs) {
        return new ContainerPorts("docker:aa", "bridge", "n1", Map.of(C, List.of(specs).stream().map(PortSpec::parse).toList()));
    }

    @Test
    void whatIsMissingAndWhatIsNoLongerWantedGoInOneChange() {
        int changed = reconciler().apply(wanting("8080:80", "8081:81"), List.of(held(8080, 80), held(9090, 90)));
        assertThat(changed).isEqualTo(2);
        assertThat(calls).containsExactly("change docker:aa -172.17.0.2 [9090:90/tcp] +172.17.0.2 [8081:81/tcp]");
    }

    @Test
    void aDualStackContainersPortsAreOneChange() {
        ContainerPorts dual = new ContainerPorts("docker:aa", "bridge", "n1", Map.of(C, List.of(PortSpec.parse("8080:80")),
                C6, List.of(PortSpec.parse("8080:80"))));
        assertThat(reconciler().add(dual, List.of(), " at its network connect")).isEqualTo(2);
        assertThat(calls).singleElement().asString().contains("+172.17.0.2 [8080:80/tcp]").contains("+fd00:0:0:0:0:0:0:2 [8080:80/tcp]");
        assertThat(lines).contains("published *:8080 -> 172.17.0.2:80/tcp for container aa at its network connect");
    }

    @Test
    void aPortHeldByAnotherProcessIsRefusedAndReportedAloneAndTheRestPublished() {
        PortsReconciler r = reconciler(p -> p.hostStart() == 8081
                ? new ConflictException("host port *:8081/tcp is in use on the host in lab: nginx (pid 7) listens on 0.0.0.0:8081/tcp")
                : null);
        assertThat(r.apply(wanting("8080:80", "8081:81", "8082:82"), List.of())).isEqualTo(2);
        assertThat(calls).containsExactly("change docker:aa +172.17.0.2 [8080:80/tcp, 8081:81/tcp, 8082:82/tcp]",
                "publish [8080:80/tcp]", "publish [8081:81/tcp]", "publish [8082:82/tcp]");
        assertThat(checks).as("dockerd's and docker-proxy's sockets are its reservations, nobody else's")
                .containsOnly(HostPortCheck.exceptHeldBy("dockerd", "docker-proxy"));
        assertThat(lines).filteredOn(l -> l.startsWith("not")).containsExactly("not published for container aa: host port"
                + " *:8081/tcp is in use on the host in lab: nginx (pid 7) listens on 0.0.0.0:8081/tcp");
    }

    @Test
    void whatIsInPlaceIsNotSentAgain() {
        assertThat(reconciler().apply(wanting("8080:80"), List.of(held(8080, 80)))).isZero();
        assertThat(calls).isEmpty();
    }

    @Test
    void aContainerGoneTakesAllOfItsMappingsAndOnlyItsOwn() {
        reconciler().remove("docker:aa", List.of(held(8080, 80), held(8081, 81)));
        assertThat(calls).containsExactly("change docker:aa -172.17.0.2 []");
    }
}
