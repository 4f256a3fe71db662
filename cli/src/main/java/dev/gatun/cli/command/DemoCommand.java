package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.facade.Gatun;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.Network;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.NftRenderer;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Table;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The main job end to end on throwaway namespaces: a host, two containers and an outside
 * client. Never touches this machine's own namespace; removes everything it made, also on
 * failure and on Ctrl-C; exits 0 only if every check passed.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the main job on throwaway namespaces and prove each traffic path with real requests.",
        footer = {"", "Examples:", "  sudo ./gatun demo", "  ./gatun --json demo"})
final class DemoCommand extends Base {

    private static final String OUTSIDE_HOST = "192.0.2.1";
    private static final String OUTSIDE_CLIENT = "192.0.2.2";

    private record Check(String name, boolean ok, String detail) {}

    private final List<Check> checks = new ArrayList<>();
    private final Map<String, Long> timings = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        String tag = Long.toString(ProcessHandle.current().pid());
        List<String> names = List.of("gatun-demo-host-" + tag, "gatun-demo-c1-" + tag, "gatun-demo-c2-" + tag,
                "gatun-demo-out-" + tag);
        Thread cleanup = new Thread(() -> removeNamespaces(names));
        Runtime.getRuntime().addShutdownHook(cleanup); // Ctrl-C
        Output o = out();
        String ruleset = null;
        Network network = null;
        String addrAssignType = null;
        try (ReplyServers traffic = new ReplyServers()) {
            NetworkNamespace host = NamedNamespaces.create(names.get(0));
            NetworkNamespace c1 = NamedNamespaces.create(names.get(1));
            NetworkNamespace c2 = NamedNamespaces.create(names.get(2));
            NetworkNamespace outside = NamedNamespaces.create(names.get(3));
            o.line("made throwaway namespaces " + String.join(", ", names));
            connectOutside(host, outside);
            try (GatunDriver gatun = Gatun.open(host)) {
                network = gatun.createNetwork(NetworkSpec.of("demo", Prefix.parse("10.99.0.0/24")));
                addrAssignType = sysfs(host, network.bridge(), "addr_assign_type");
                o.line("network demo: bridge " + network.bridge() + ", MAC " + network.mac() + " (addr_assign_type "
                        + addrAssignType + ": set by gatun, it never follows a port)");
                Endpoint e1 = gatun.attach(EndpointSpec.of("demo", c1));
                Endpoint e2 = gatun.attach(EndpointSpec.of("demo", c2));
                o.line("attached c1 as " + e1.ip().getHostAddress() + " and c2 as " + e2.ip().getHostAddress());
                String ip1 = e1.ip().getHostAddress();
                traffic.tcp(c1, ip1, 80, "hello from c1").tcp(c1, ip1, 81, "c1 port 81 (unpublished)")
                        .udp(c1, ip1, 53, "udp hello from c1").tcp(c2, e2.ip().getHostAddress(), 80, "hello from c2");

                timed("publish 8080:80/tcp and 5353:53/udp to c1", () ->
                        gatun.publish(new PortRequest("demo", e1.ip(), List.of(PortSpec.parse("8080:80"), PortSpec.parse("5353:53/udp")), null)));
                timed("publish 8081:80 to c2", () -> gatun.publish(new PortRequest("demo", e2.ip(), List.of(PortSpec.parse("8081:80")), null)));

                expect("outside -> " + OUTSIDE_HOST + ":8080/tcp reaches c1", "hello from c1",
                        () -> ReplyServers.tcpFetch(outside, OUTSIDE_HOST, 8080));
                expect("outside -> " + OUTSIDE_HOST + ":5353/udp reaches c1", "udp hello from c1",
                        () -> udpAsk(outside, OUTSIDE_HOST, 5353));
                expect("outside -> " + OUTSIDE_HOST + ":8081/tcp reaches c2", "hello from c2",
                        () -> ReplyServers.tcpFetch(outside, OUTSIDE_HOST, 8081));
                expect("hairpin: c2 -> " + OUTSIDE_HOST + ":8080 reaches c1", "hello from c1",
                        () -> ReplyServers.tcpFetch(c2, OUTSIDE_HOST, 8080));
                expect("hairpin: c1 -> " + OUTSIDE_HOST + ":8080 reaches itself", "hello from c1",
                        () -> ReplyServers.tcpFetch(c1, OUTSIDE_HOST, 8080));
                expect("host -> 127.0.0.1:8080 reaches c1", "hello from c1",
                        () -> ReplyServers.tcpFetch(host, "127.0.0.1", 8080));
                refused("outside -> " + OUTSIDE_HOST + ":81 (not published) is refused",
                        () -> ReplyServers.tcpFetch(outside, OUTSIDE_HOST, 81));
                refused("outside -> " + ip1 + ":81 routed straight to c1 is dropped",
                        () -> ReplyServers.tcpFetch(outside, ip1, 81));
                try (Nftables nft = Nftables.open(host)) {
                    ruleset = NftRenderer.render(nft.list(Table.of(Family.INET, "gatun")));
                }
                gatun.deleteNetwork("demo", true);
            }
        } catch (RuntimeException | IOException e) {
            checks.add(new Check("demo ran to the end", false, e.getMessage()));
        } finally {
            removeNamespaces(names);
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running already
            }
        }
        boolean allPassed = !checks.isEmpty() && checks.stream().allMatch(Check::ok);
        report(o, network, addrAssignType, ruleset, allPassed);
        return allPassed ? ExitCode.OK : ExitCode.FAILED;
    }

    private void report(Output o, Network network, String addrAssignType, String ruleset, boolean allPassed) {
        if (o.json()) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("passed", allPassed);
            doc.put("bridge", network == null ? null : Map.of("name", network.bridge(), "mac", String.valueOf(network.mac()),
                    "addrAssignType", String.valueOf(addrAssignType)));
            doc.put("checks", checks.stream().map(c -> Map.of("check", c.name, "ok", c.ok, "detail", c.detail)).toList());
            doc.put("publishMicros", timings);
            doc.put("ruleset", ruleset);
            o.json(doc);
            return;
        }
        o.line("");
        for (Check c : checks) {
            o.line((c.ok ? "  PASS  " : "  FAIL  ") + c.name + (c.ok ? "" : ": " + c.detail));
        }
        o.line("");
        timings.forEach((what, us) -> o.line(String.format("  %-45s %8d us", what, us)));
        if (ruleset != null) {
            o.line("");
            o.line("gatun's ruleset, read back over netlink:");
            o.line(ruleset.stripTrailing());
        }
        o.line("");
        o.line(allPassed ? "demo passed: every path worked, and everything it made is gone"
                : "demo FAILED: see the checks above; everything it made is gone");
    }

    private interface Action {
        String run() throws Exception;
    }

    private void timed(String what, Runnable work) {
        long start = System.nanoTime();
        work.run();
        timings.put(what, (System.nanoTime() - start) / 1000);
    }

    private void expect(String name, String expected, Action action) {
        try {
            String got = action.run();
            checks.add(new Check(name, expected.equals(got), "got '" + got + "'"));
        } catch (Exception e) {
            checks.add(new Check(name, false, String.valueOf(e.getMessage())));
        }
    }

    private void refused(String name, Action action) {
        try {
            String got = action.run();
            checks.add(new Check(name, false, "it answered '" + got + "'"));
        } catch (Exception e) {
            checks.add(new Check(name, true, "no answer (" + e.getClass().getSimpleName() + ")"));
        }
    }

    /** Asks up to three times, a second each, as a UDP client does: one datagram may be lost on its way. */
    private static String udpAsk(NetworkNamespace ns, String address, int port) throws IOException {
        try (DatagramChannel client = ReplyServers.udpClient(ns)) {
            for (int attempt = 0; attempt < 3; attempt++) {
                String answer = ReplyServers.udpAsk(client, address, port);
                if (answer != null) {
                    return answer;
                }
            }
            throw new IOException("no UDP answer from " + address + ":" + port + " to 3 datagrams");
        }
    }

    /** A sysfs attribute of a link in a named namespace, read as ip netns exec sees it. */
    private static String sysfs(NetworkNamespace ns, String link, String attribute) {
        try {
            Process p = new ProcessBuilder("ip", "netns", "exec", ns.name(), "cat",
                    "/sys/class/net/" + link + "/" + attribute).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = utf8(p.getInputStream().readAllBytes()).strip();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : "unknown";
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static void connectOutside(NetworkNamespace host, NetworkNamespace outside) {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createVeth("gout", null, "eth0", null, outside, null);
            rt.addAddress("gout", Prefix.parse(OUTSIDE_HOST + "/24"));
            rt.setUp("gout", true);
            rt.setUp("lo", true);
        }
        try (Rtnetlink rt = Rtnetlink.open(outside)) {
            rt.addAddress("eth0", Prefix.parse(OUTSIDE_CLIENT + "/24"));
            rt.setUp("eth0", true);
            rt.setUp("lo", true);
            // A route straight to the containers, to show it is dropped.
            rt.addRoute(Prefix.parse("10.99.0.0/24"), InetAddress.ofLiteral(OUTSIDE_HOST), "eth0");
        }
    }

    private static void removeNamespaces(List<String> names) {
        for (String n : names) {
            try {
                if (NamedNamespaces.exists(n)) {
                    NamedNamespaces.delete(n);
                }
            } catch (RuntimeException e) {
                System.err.println("gatun: could not remove namespace " + n + ": " + e.getMessage());
            }
        }
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
