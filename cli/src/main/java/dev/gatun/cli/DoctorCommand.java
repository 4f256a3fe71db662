package dev.gatun.cli;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.driver.Network;
import dev.gatun.internal.NativeLibraries;
import dev.gatun.netlink.NftChannel;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Chain;
import dev.gatun.nft.Hook;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Verdict;
import picocli.CommandLine.Command;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Checks what gatun needs on this host and what could get in its way. */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = "Check privileges, libraries, nf_tables, iptables variants, other firewalls and gatun bridges.",
        footer = {"", "Exit code 0 when gatun can work here, 4 when something it needs is missing.",
                "", "Examples:", "  gatun doctor", "  gatun --json doctor"})
final class DoctorCommand extends Base {

    private record Check(String check, boolean ok, String detail) {}

    @Override
    public Integer call() {
        List<Check> checks = new ArrayList<>();
        boolean privileged = privileged();
        checks.add(new Check("privileges", privileged, privileged ? "CAP_NET_ADMIN and CAP_SYS_ADMIN present"
                : "run as root: gatun needs CAP_NET_ADMIN and CAP_SYS_ADMIN"));
        boolean libs = true;
        for (String lib : List.of("libmnl.so.0", "libnftnl.so.11")) {
            String file = loadedFile(lib);
            libs &= file != null;
            checks.add(new Check(lib, file != null, file != null ? file : lib + " cannot be loaded; install it (apt-get install "
                    + (lib.startsWith("libmnl") ? "libmnl0" : "libnftnl11") + ")"));
        }
        boolean nftables = false;
        NetworkNamespace host = null;
        try {
            host = root().host();
            try (NftChannel ch = NftChannel.open(host)) {
                checks.add(new Check("nf_tables", true, "usable in " + host.describe() + " (generation " + ch.generation() + ")"));
                nftables = true;
            }
        } catch (RuntimeException e) {
            checks.add(new Check("nf_tables", false, e.getMessage()));
        }
        if (host != null) {
            try {
                dev.gatun.Gatun.Choice choice = dev.gatun.Gatun.choose(host);
                checks.add(new Check("driver", true, "auto picks " + choice.driver() + ": " + choice.reason()));
            } catch (RuntimeException e) {
                checks.add(new Check("driver", false, e.getMessage()));
            }
        }
        List<String> inHost = host == null || host.isCurrent() || host.name() == null
                ? List.of() : List.of("ip", "netns", "exec", host.name());
        for (String variant : List.of("iptables", "iptables-legacy", "iptables-nft")) {
            checks.add(iptables(inHost, variant));
        }
        if (nftables) {
            checks.add(otherNftablesFirewall(host));
        }
        checks.add(iptablesForwardPolicy(inHost));
        if (nftables && privileged) {
            checks.addAll(bridges(host));
        }
        Output o = out();
        if (o.json()) {
            List<Map<String, Object>> doc = new ArrayList<>();
            for (Check c : checks) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("check", c.check);
                m.put("ok", c.ok);
                m.put("detail", c.detail);
                doc.add(m);
            }
            o.json(doc);
        } else {
            o.table(List.of("CHECK", "OK", "DETAIL"), checks.stream().map(c -> List.of(c.check, c.ok ? "ok" : "NO", c.detail))
                    .toList());
        }
        return privileged && libs && nftables ? ExitCode.OK : ExitCode.ENVIRONMENT;
    }

    private static boolean privileged() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    BigInteger caps = new BigInteger(line.substring(7).strip(), 16);
                    return caps.testBit(libc_h.CAP_NET_ADMIN) && caps.testBit(libc_h.CAP_SYS_ADMIN);
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /** The file the dynamic loader opened for a library (its name carries the version), or null. */
    private static String loadedFile(String lib) {
        try {
            if (lib.startsWith("libnftnl")) {
                NativeLibraries.requireNftables();
            } else {
                NativeLibraries.requireNetlink();
            }
            String stem = lib.substring(0, lib.indexOf(".so"));
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                int slash = line.indexOf('/');
                if (slash > 0 && line.substring(slash).contains("/" + stem + ".so")) {
                    return Path.of(line.substring(slash)).toRealPath().toString();
                }
            }
            return lib;
        } catch (RuntimeException | IOException e) {
            return null;
        }
    }

    private static List<String> in(List<String> prefix, String... cmd) {
        List<String> out = new ArrayList<>(prefix);
        out.addAll(List.of(cmd));
        return out;
    }

    private static Check iptables(List<String> inHost, String variant) {
        Result version = run(List.of(variant, "--version"));
        if (version == null) {
            return new Check(variant, true, "not installed");
        }
        Result wait = run(in(inHost, variant, "-w", "5", "-L", "FORWARD", "-n"));
        boolean waits = wait != null && !wait.err.contains("unrecognized option") && !wait.err.contains("invalid option");
        return new Check(variant, true, version.out.strip() + (waits ? ", takes -w" : ", does NOT take -w"));
    }

    private static Check iptablesForwardPolicy(List<String> inHost) {
        Result r = run(in(inHost, "iptables", "-w", "5", "-S", "FORWARD"));
        if (r == null || r.code != 0) {
            return new Check("iptables FORWARD policy", true, "not readable (iptables missing or no privilege)");
        }
        boolean drop = r.out.lines().anyMatch(l -> l.equals("-P FORWARD DROP"));
        return new Check("iptables FORWARD policy", !drop, drop
                ? "DROP: published traffic is dropped unless the FORWARD chain accepts it" : "ACCEPT");
    }

    private static Check otherNftablesFirewall(NetworkNamespace host) {
        try (Nftables nft = Nftables.open(host)) {
            List<String> dropping = new ArrayList<>();
            for (Chain c : nft.list().chains()) {
                if (c.isBase() && c.base().hook() == Hook.FORWARD && c.base().policy() == Verdict.Code.DROP
                        && !c.table().equals("gatun")) {
                    dropping.add(c.family() + " " + c.table() + " " + c.name());
                }
            }
            return new Check("other nftables firewall", dropping.isEmpty(), dropping.isEmpty()
                    ? "no other forward chain drops by default"
                    : "forward chains with policy drop: " + String.join(", ", dropping) + " (they drop published traffic)");
        } catch (RuntimeException e) {
            return new Check("other nftables firewall", true, "could not list the ruleset: " + e.getMessage());
        }
    }

    private List<Check> bridges(NetworkNamespace host) {
        List<Check> out = new ArrayList<>();
        List<Network> networks;
        try {
            networks = withDriver(d -> d.networks());
        } catch (RuntimeException e) {
            out.add(new Check("gatun networks", false, e.getMessage()));
            return out;
        }
        for (Network n : networks) {
            String type = host.isCurrent() ? read("/sys/class/net/" + n.bridge() + "/addr_assign_type")
                    : host.name() == null ? null
                    : output(List.of("ip", "netns", "exec", host.name(), "cat", "/sys/class/net/" + n.bridge() + "/addr_assign_type"));
            boolean fixed = "3".equals(type);
            out.add(new Check("bridge " + n.bridge(), fixed, "network " + n.name() + ", MAC " + n.mac() + ", addr_assign_type "
                    + (type == null ? "unknown" : type) + (fixed ? " (set: it never follows a port)" : " (it may float)")));
        }
        return out;
    }

    private static String read(String file) {
        try {
            return Files.readString(Path.of(file)).strip();
        } catch (IOException e) {
            return null;
        }
    }

    private static String output(List<String> cmd) {
        Result r = run(cmd);
        return r == null || r.code != 0 ? null : r.out.strip();
    }

    private record Result(int code, String out, String err) {}

    /** Runs a tool with a timeout; null when it cannot be started. */
    private static Result run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).start();
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, "", "timed out");
            }
            return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                    new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
