package dev.gatun.driver;

import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.driver.foreign.AcceptMark;
import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.Firewalld;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.HostFirewalls;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hosts as they really are: namespaces set up the way Docker, ufw (an iptables FORWARD policy
 * DROP) or another nftables table leave them. In each, published ports must answer from
 * outside, hairpin must work, unpublished ports and direct routes must stay dropped, and the
 * other tool's own rules must be unchanged while gatun runs and after it leaves.
 */
@ExtendWith(FreshNamespaces.class)
class OtherFirewallsTest {

    private static final String SUBNET = "10.88.0.0/16";
    private static final String BRIDGE = "gatun-n1";

    /** How one kind of host is set up, and how its own rules are listed for comparison. */
    private record Host(String tool, Consumer<NetworkNamespace> setUp, String... list) {}

    private static final Host IPTABLES_NFT_DROP = new Host("iptables-nft",
            ns -> Oracle.in(ns, "iptables-nft", "-w", "-P", "FORWARD", "DROP"), "iptables-nft-save");

    private static final Host IPTABLES_LEGACY_DROP = new Host("iptables-legacy",
            ns -> Oracle.in(ns, "iptables-legacy", "-w", "-P", "FORWARD", "DROP"), "iptables-legacy-save");

    /** The chains and rules Docker 20.10 makes for its default bridge, through iptables-nft as on Debian. */
    private static final Host DOCKER_LAYOUT = new Host("iptables-nft",
            ns -> HostFirewalls.apply(ns, "iptables-nft", HostFirewalls.DOCKER), "iptables-nft-save");

    private static final Host NFT_TABLE_DROP = new Host("nftables", ns -> {
        Oracle.in(ns, "nft", "add", "table", "inet", "fw");
        Oracle.in(ns, "nft", "add chain inet fw forward { type filter hook forward priority 0; policy drop; }");
    }, "nft", "list", "table", "inet", "fw");

    @Test
    void iptablesNftForwardPolicyDrop(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                      NetworkNamespace c2) throws Exception {
        publishedPortsWorkBeside(IPTABLES_NFT_DROP, host, outside, c1, c2);
    }

    @Test
    void iptablesLegacyForwardPolicyDrop(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                         NetworkNamespace c2) throws Exception {
        publishedPortsWorkBeside(IPTABLES_LEGACY_DROP, host, outside, c1, c2);
    }

    @Test
    void dockersChainLayout(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1, NetworkNamespace c2)
            throws Exception {
        publishedPortsWorkBeside(DOCKER_LAYOUT, host, outside, c1, c2);
    }

    @Test
    void anotherNftablesTableWithPolicyDrop(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                            NetworkNamespace c2) throws Exception {
        publishedPortsWorkBeside(NFT_TABLE_DROP, host, outside, c1, c2);
    }

    private static void publishedPortsWorkBeside(Host fixture, NetworkNamespace host, NetworkNamespace outside,
                                                 NetworkNamespace c1, NetworkNamespace c2) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        fixture.setUp().accept(host);
        String before = theirs(Oracle.in(host, fixture.list()));
        String userRule = null;
        try (BridgeDriver gatun = BridgeDriver.nftables(host); ReplyServers servers = new ReplyServers();
             DatagramChannel udp = ReplyServers.udpClient(outside)) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
            Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
            gatun.attach(EndpointSpec.of("n1", c2));
            String ip = e1.ip().getHostAddress();
            servers.tcp(c1, ip, 80, "c1-tcp").udp(c1, ip, 80, "c1-udp").tcp(c1, ip, 81, "c1-81");
            gatun.publish(new PortRequest("n1", e1.ip(), List.of(PortSpec.parse("8080:80"), PortSpec.parse("8080:80/udp")), null));

            List<ForeignDrop> drops = gatun.foreignDrops();
            assertThat(drops).as("the drop gatun found").anySatisfy(d -> assertThat(d.firewall()).startsWith(fixture.tool()));
            if (fixture == NFT_TABLE_DROP) {
                ForeignDrop d = drops.stream().filter(x -> x.where().equals("inet fw forward")).findFirst().orElseThrow();
                assertThat(d.open()).isFalse();
                assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 8080))
                        .as("gatun cannot edit another table: dropped until the user adds the printed rule").isFalse();
                userRule = d.action().substring(d.action().indexOf("nft insert rule "));
                assertThat(userRule).isEqualTo(AcceptMark.acceptRule("inet", "fw", "forward", AcceptMark.DEFAULT));
                Oracle.in(host, userRule.split(" "));
                assertThat(gatun.foreignDrops()).filteredOn(x -> x.where().equals("inet fw forward"))
                        .allSatisfy(x -> assertThat(x.open()).as("open once the rule is there").isTrue());
            } else {
                assertThat(drops).filteredOn(d -> d.firewall().equals(fixture.tool()))
                        .allSatisfy(d -> assertThat(d.open()).as(d.describe()).isTrue());
            }

            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).as("published TCP from outside")
                    .isEqualTo("c1-tcp");
            assertThat(ReplyServers.udpAsk(udp, Lab.HOST_ADDRESS, 8080)).as("published UDP from outside").isEqualTo("c1-udp");
            assertThat(ReplyServers.tcpFetch(c2, Lab.HOST_ADDRESS, 8080)).as("hairpin from a sibling").isEqualTo("c1-tcp");
            assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 81)).as("unpublished port").isFalse();
            assertThat(ReplyServers.tcpAnswers(outside, ip, 81)).as("route straight to the container").isFalse();
            assertThat(ReplyServers.tcpAnswers(outside, ip, 80)).as("route straight to a published container port").isFalse();
            assertControlsOfTheRefusals(host, outside, ip);

            String during = Oracle.in(host, fixture.list());
            assertThat(withoutGatun(theirs(during), userRule)).as("the other tool's own rules while gatun runs").isEqualTo(before);
            if (fixture == DOCKER_LAYOUT) {
                assertThat(during).contains("-A DOCKER-USER -j GATUN-ALLOW\n-A DOCKER-USER -j RETURN");
                assertThat(during).containsOnlyOnce("-j GATUN-ALLOW");
            }

            gatun.deleteNetwork("n1", true);
            String after = Oracle.in(host, fixture.list());
            assertThat(withoutUserRule(theirs(after), userRule)).as("after gatun's last network").isEqualTo(before);
            assertThat(after).doesNotContain("GATUN");
            for (String save : List.of("iptables-nft-save", "iptables-legacy-save", "ip6tables-nft-save", "ip6tables-legacy-save")) {
                assertThat(Oracle.in(host, save)).as(save).doesNotContain("GATUN");
            }
        }
    }

    @Test
    void aLongRunningDriverPutsBackWhatDockerAndOtherFirewallsUndo(NetworkNamespace host, NetworkNamespace outside,
                                                                  NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        DOCKER_LAYOUT.setUp().accept(host);
        List<String> log = new CopyOnWriteArrayList<>();
        try (SelfHealingDriver gatun = SelfHealingDriver.start(BridgeDriver.nftables(host), log::add);
             ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
            Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
            servers.tcp(c1, e1.ip().getHostAddress(), 80, "c1");
            gatun.publish(new PortRequest("n1", e1.ip(), List.of(PortSpec.parse("8080:80")), null));
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1");

            // What a user's script or a Docker reinstall may do: DOCKER-USER emptied and made again.
            Oracle.in(host, "iptables-nft", "-w", "-F", "DOCKER-USER");
            Oracle.in(host, "iptables-nft", "-w", "-A", "DOCKER-USER", "-j", "RETURN");
            assertThat(showsWithin(host, "iptables-nft-save", "-A DOCKER-USER -j GATUN-ALLOW", 1_000))
                    .as("the jump is back within a second").isTrue();
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1");
            // The log line follows the commit that put the jump back.
            long deadline = System.nanoTime() + 2_000_000_000L;
            while (log.stream().noneMatch(l -> l.startsWith("repaired the jump")) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(log).anyMatch(l -> l.startsWith("repaired the jump to GATUN-ALLOW in iptables-nft DOCKER-USER"));

            // Another firewall turns up later: legacy iptables with FORWARD DROP (it sends no
            // notifications, so the periodic check finds it).
            Oracle.in(host, "iptables-legacy", "-w", "-P", "FORWARD", "DROP");
            assertThat(showsWithin(host, "iptables-legacy-save", "-A FORWARD -j GATUN-ALLOW", 7_000))
                    .as("opened once the periodic check ran").isTrue();
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1");
        }
    }

    /**
     * A serve opens other firewalls at every change another tool makes to its rules, some of
     * which change them all day: a drop gatun cannot open itself is warned about when it first
     * stands, not at each of those, and again once it went and came back.
     */
    @Test
    void aDropOfAnotherTableIsWarnedAboutOnceWhileItStands(NetworkNamespace host) {
        List<String> warnings = new CopyOnWriteArrayList<>();
        Logger jul = Logger.getLogger("dev.gatun");
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                warnings.add(r.getMessage());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        jul.addHandler(handler);
        try (BridgeDriver gatun = BridgeDriver.nftables(host)) {
            NFT_TABLE_DROP.setUp().accept(host);
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
            assertThat(warnings).as("at the network's creation").singleElement().asString()
                    .contains("inet fw forward", "drops traffic of gatun's bridges", "accept");
            for (int i = 0; i < 3; i++) {
                Oracle.in(host, "nft", "add", "chain", "inet", "fw", "c" + i);
                gatun.repairOtherFirewalls();
            }
            assertThat(warnings).as("after three changes to the other table, the drop still there").hasSize(1);

            Oracle.in(host, "nft", "delete", "table", "inet", "fw");
            gatun.repairOtherFirewalls();
            assertThat(warnings).as("the drop gone").hasSize(1);
            NFT_TABLE_DROP.setUp().accept(host);
            gatun.repairOtherFirewalls();
            assertThat(warnings).as("the drop back").hasSize(2);
            assertThat(warnings.get(1)).isEqualTo(warnings.get(0));
        } finally {
            jul.removeHandler(handler);
        }
    }

    @Test
    void firewalld(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1, NetworkNamespace c2,
                   @TempDir Path dir) throws Exception {
        Firewalld.requireAvailable();
        Lab.connectOutside(host, outside, SUBNET);
        List<String> log = new CopyOnWriteArrayList<>();
        try (Firewalld fw = Firewalld.start(host, dir)) {
            System.setProperty("gatun.dbusSystemBusAddress", fw.busAddress());
            String before = fw.firewallCmdOk("--list-all-zones").stdout();
            try (SelfHealingDriver gatun = SelfHealingDriver.start(BridgeDriver.nftables(host), log::add);
                 ReplyServers servers = new ReplyServers(); DatagramChannel udp = ReplyServers.udpClient(outside)) {
                gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
                Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
                gatun.attach(EndpointSpec.of("n1", c2));
                String ip = e1.ip().getHostAddress();
                servers.tcp(c1, ip, 80, "c1-tcp").udp(c1, ip, 80, "c1-udp").tcp(c1, ip, 81, "c1-81")
                        .tcp(outside, "192.0.2.2", 7777, "outside");
                gatun.publish(new PortRequest("n1", e1.ip(), List.of(PortSpec.parse("8080:80"), PortSpec.parse("8080:80/udp")), null));

                assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=" + BRIDGE).stdout()).isEqualTo("yes\n");
                try (BridgeDriver plain = BridgeDriver.nftables(host)) {
                    assertThat(plain.foreignDrops()).filteredOn(d -> d.firewall().equals("firewalld"))
                            .singleElement().satisfies(d -> assertThat(d.open()).as(d.describe()).isTrue());
                }
                assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1-tcp");
                assertThat(ReplyServers.udpAsk(udp, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1-udp");
                assertThat(ReplyServers.tcpFetch(c2, Lab.HOST_ADDRESS, 8080)).as("hairpin").isEqualTo("c1-tcp");
                assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 81)).as("unpublished port").isFalse();
                assertThat(ReplyServers.tcpAnswers(outside, ip, 81)).as("route straight to the container").isFalse();
                assertControlsOfTheRefusals(host, outside, ip);
                assertThat(ReplyServers.tcpFetch(c1, "192.0.2.2", 7777)).as("a container's own connection out")
                        .isEqualTo("outside");

                // What firewalld does to a bridge outside its trusted zone: it rejects what the container starts.
                fw.firewallCmdOk("--zone=trusted", "--remove-interface=" + BRIDGE);
                assertThat(ReplyServers.tcpAnswers(c1, "192.0.2.2", 7777)).as("out, with the bridge in no zone").isFalse();
                // A reload re-creates firewalld's table and forgets run-time zones: gatun puts its bridge back.
                // README.md: a serve puts back what a firewall reload removed within a second. Measured
                // here from the reload's answer to the bridge in firewalld's new table: 56-310 ms (11 runs).
                String oldTable = firewalldTableHandle(host);
                fw.firewallCmdOk("--reload");
                long t0 = System.nanoTime();
                long deadline = t0 + 1_000_000_000L;
                String table = Oracle.tryIn(host, "nft", "-a", "list", "table", "inet", "firewalld").stdout();
                while (!isNewFirewalldTableWithBridge(table, oldTable) && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                    table = Oracle.tryIn(host, "nft", "-a", "list", "table", "inet", "firewalld").stdout();
                }
                long tookMs = (System.nanoTime() - t0) / 1_000_000;
                assertThat(isNewFirewalldTableWithBridge(table, oldTable))
                        .as("firewalld's new table names " + BRIDGE + " within a second of the reload (" + tookMs
                                + " ms; log: " + log + ")").isTrue();
                assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=" + BRIDGE).stdout()).isEqualTo("yes\n");
                assertThat(ReplyServers.tcpFetch(c1, "192.0.2.2", 7777)).as("out again after the reload").isEqualTo("outside");
                assertThat(log).anyMatch(l -> l.equals("repaired bridge(s) " + BRIDGE + " in firewalld's zone trusted"));

                gatun.deleteNetwork("n1", true);
                assertThat(fw.firewallCmdOk("--zone=trusted", "--list-interfaces").stdout().strip()).isEmpty();
                // firewalld's own view of its zones is as before; its table keeps the (now empty)
                // chains of a zone once used until its next reload, but nothing names the bridge.
                assertThat(fw.firewallCmdOk("--list-all-zones").stdout()).as("firewalld's zones after gatun left")
                        .isEqualTo(before);
                assertThat(Oracle.in(host, "nft", "list", "table", "inet", "firewalld")).doesNotContain(BRIDGE);
            } finally {
                System.clearProperty("gatun.dbusSystemBusAddress");
            }
        }
    }

    /** The handle of firewalld's table as {@code nft -a} lists it: a reload makes a new table with a new handle. */
    private static String firewalldTableHandle(NetworkNamespace host) {
        String first = Oracle.in(host, "nft", "-a", "list", "table", "inet", "firewalld").lines().findFirst().orElse("");
        assertThat(first).as("firewalld's table with its handle").contains("# handle ");
        return first.substring(first.indexOf("# handle "));
    }

    private static boolean isNewFirewalldTableWithBridge(String listing, String oldHandle) {
        String first = listing.lines().findFirst().orElse("");
        return first.contains("# handle ") && !first.substring(first.indexOf("# handle ")).equals(oldHandle)
                && listing.contains("\"" + BRIDGE + "\"");
    }

    /** Whether {@code save}'s listing in {@code ns} shows {@code line} within {@code millis}, looking every 20 ms. */
    private static boolean showsWithin(NetworkNamespace ns, String save, String line, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        do {
            if (Oracle.in(ns, save).lines().anyMatch(line::equals)) {
                return true;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        return false;
    }

    /** A listing without what changes by itself: comments with dates, packet counters, rule handles. */
    private static String theirs(String listing) {
        return listing.lines().filter(l -> !l.startsWith("#"))
                .map(l -> l.replaceAll("\\[\\d+:\\d+]", "[0:0]"))
                .reduce("", (a, b) -> a + b + "\n");
    }

    private static String withoutGatun(String listing, String userRule) {
        return withoutUserRule(listing.lines().filter(l -> !l.contains("GATUN-ALLOW")).reduce("", (a, b) -> a + b + "\n"),
                userRule);
    }

    private static String withoutUserRule(String listing, String userRule) {
        if (userRule == null) {
            return listing;
        }
        String rule = userRule.substring(userRule.indexOf("meta mark"));
        return listing.lines().filter(l -> !l.strip().equals(rule)).reduce("", (a, b) -> a + b + "\n");
    }

    /**
     * What makes the refusals above mean something: the container's servers answer where no
     * forward rule stands between (from the host itself), and the real ip says the outside's
     * route to the container leads through the host. Only the forward path is shut.
     */
    private static void assertControlsOfTheRefusals(NetworkNamespace host, NetworkNamespace outside, String ip)
            throws Exception {
        assertThat(ReplyServers.tcpFetch(host, ip, 81)).as("control: port 81 from the host").isEqualTo("c1-81");
        assertThat(ReplyServers.tcpFetch(host, ip, 80)).as("control: port 80 from the host").isEqualTo("c1-tcp");
        assertThat(Oracle.in(outside, "ip", "route", "get", ip)).as("control: the outside's route to the container")
                .contains("via " + Lab.HOST_ADDRESS);
    }
}
