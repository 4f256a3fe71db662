package dev.gatun.cli.dockerd;

import dev.gatun.driver.ConflictException;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.StandInDriver;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What the reconciler asks the driver, for what a container holds and what dockerd recorded; no kernel needed. */
class PortsReconcilerTest {

    private static final InetAddress C = Prefix.address("172.17.0.2");
    private final List<String> calls = new ArrayList<>();

    private PortsReconciler reconciler() {
        return new PortsReconciler(StandInDriver.answering(Map.of(
                "publishOutside", a -> {
                    calls.add("publish " + a[2] + " " + a[1].toString().substring(1) + " " + a[3]);
                    return List.of();
                },
                "unpublishOutside", a -> {
                    calls.add("unpublish " + a[2] + " " + a[1].toString().substring(1) + " " + a[3]);
                    return List.of();
                })), line -> { });
    }

    private static PortMapping held(int hostPort, int containerPort) {
        return new PortMapping(null, Protocol.TCP, null, hostPort, C, containerPort, "docker:aa");
    }

    private static ContainerPorts wanting(String... specs) {
        return new ContainerPorts("docker:aa", "bridge", "n1", Map.of(C, List.of(specs).stream().map(PortSpec::parse).toList()));
    }

    @Test
    void whatIsMissingIsAddedBeforeWhatIsNoLongerWantedGoes() {
        int changed = reconciler().apply(wanting("8080:80", "8081:81"), List.of(held(8080, 80), held(9090, 90)));
        assertThat(changed).isEqualTo(2);
        assertThat(calls).containsExactly("publish [8081:81/tcp] 172.17.0.2 docker:aa",
                "unpublish [9090:90/tcp] 172.17.0.2 docker:aa");
    }

    @Test
    void aPortHeldByAnotherProcessIsRefusedAndReportedAloneAndTheRestPublished() {
        List<String> lines = new ArrayList<>();
        List<Object> checks = new ArrayList<>();
        PortsReconciler r = new PortsReconciler(StandInDriver.answering(Map.of("publishOutside", a -> {
            calls.add("publish " + a[2]);
            checks.add(a[4]);
            if (a[2].toString().contains("8081")) {
                throw new ConflictException("host port *:8081/tcp is in use on the host in lab: nginx (pid 7) listens on 0.0.0.0:8081/tcp");
            }
            return List.of();
        })), lines::add);
        assertThat(r.apply(wanting("8080:80", "8081:81", "8082:82"), List.of())).isEqualTo(2);
        assertThat(calls).containsExactly("publish [8080:80/tcp, 8081:81/tcp, 8082:82/tcp]", "publish [8080:80/tcp]",
                "publish [8081:81/tcp]", "publish [8082:82/tcp]");
        assertThat(checks).as("dockerd's and docker-proxy's sockets are its reservations, nobody else's")
                .containsOnly(HostPortCheck.exceptHeldBy("dockerd", "docker-proxy"));
        assertThat(lines).containsExactly("not published for container aa: host port *:8081/tcp is in use on the host in lab:"
                + " nginx (pid 7) listens on 0.0.0.0:8081/tcp");
    }

    @Test
    void whatIsInPlaceIsNotSentAgain() {
        assertThat(reconciler().apply(wanting("8080:80"), List.of(held(8080, 80)))).isZero();
        assertThat(calls).isEmpty();
    }

    @Test
    void aContainerGoneTakesAllOfItsMappingsAndOnlyItsOwn() {
        reconciler().remove("docker:aa", List.of(held(8080, 80), held(8081, 81)));
        assertThat(calls).containsExactly("unpublish [] 172.17.0.2 docker:aa");
    }
}
