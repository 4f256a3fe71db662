package dev.gatun.cli.service;

import dev.gatun.facade.Gatun;
import dev.gatun.cli.service.DoctorReport.Check;
import dev.gatun.driver.Network;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.LocalnetRoute;
import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netlink.NftChannel;
import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What gatun needs on this host and what could get in its way: privileges, libraries,
 * nf_tables, iptables variants, other firewalls' drops, host sockets on published ports,
 * bridges whose MAC may float. A check that could not run is never reported as passed.
 */
final class Doctor {

    private final Supplier<NetworkNamespace> host;
    private final Drivers drivers;
    private final boolean inServe;

    Doctor(Supplier<NetworkNamespace> host, Drivers drivers, boolean inServe) {
        this.host = host;
        this.drivers = drivers;
        this.inServe = inServe;
    }

    DoctorReport run() {
        List<Check> checks = new ArrayList<>();
        boolean privileged = Gatun.privileged();
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
            host = this.host.get();
            try (NftChannel ch = NftChannel.open(host)) {
                checks.add(new Check("nf_tables", true, "usable in " + host.describe() + " (generation " + ch.generation() + ")"));
                nftables = true;
            }
        } catch (RuntimeException e) {
            checks.add(new Check("nf_tables", false, e.getMessage()));
        }
        if (host != null) {
            checks.add(serve(host));
            try {
                Gatun.Choice choice = Gatun.choose(host);
                checks.add(new Check("driver", true, "auto picks " + choice.driver() + ": " + choice.reason()));
            } catch (RuntimeException e) {
                checks.add(new Check("driver", false, e.getMessage()));
            }
        }
        for (String variant : List.of("iptables", "iptables-legacy", "iptables-nft")) {
            checks.add(iptables(variant));
        }
        if (privileged) {
            checks.addAll(foreignDrops());
            checks.addAll(hostPortsInUse());
        }
        if (nftables && privileged) {
            checks.addAll(bridges(host));
        }
        if (privileged) {
            checks.addAll(localnetRoutes());
        }
        return new DoctorReport(checks, privileged && libs && nftables);
    }

    /**
     * Whether a gatun serve answers for the namespace: the one-shot commands' speed depends on
     * it more than on anything else. Either way gatun works, so the check passes.
     */
    private Check serve(NetworkNamespace host) {
        Path socket = ServeSockets.of(host);
        if (inServe) {
            return new Check("serve", true, "this doctor ran in the gatun serve answering on " + socket);
        }
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            return new Check("serve", true, "a gatun serve answers on " + socket);
        } catch (IOException e) {
            return new Check("serve", true, "none for " + host.describe() + ": each command starts a JVM of its own; "
                    + "gatun serve (or gatun install, as a systemd service) answers them without one");
        }
    }

    /** The file the dynamic loader opened for a library (its name carries the version), or null. */
    private static String loadedFile(String lib) {
        try {
            if (lib.startsWith("libnftnl")) {
                Gatun.requireNftablesLibraries();
            } else {
                Gatun.requireNetlinkLibrary();
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

    private static Check iptables(String variant) {
        Result version = run(List.of(variant, "--version"));
        if (version == null) {
            return new Check(variant, true, "not installed");
        }
        // Its help, not a listing: listing would load legacy tables into a namespace that had none.
        Result help = run(List.of(variant, "--help"));
        boolean waits = help != null && (help.out + help.err).contains("--wait");
        return new Check(variant, waits, version.out.strip() + (waits ? ", takes -w"
                : ", does NOT take -w: gatun's iptables driver cannot wait for the xtables lock with it"));
    }

    /**
     * Every place where another firewall drops forwarded traffic (iptables of either variant,
     * firewalld, other nftables tables), and whether gatun's bridges get through it.
     */
    private List<Check> foreignDrops() {
        List<Check> out = new ArrayList<>();
        try {
            List<ForeignDrop> drops = drivers.with(GatunDriver::foreignDrops);
            for (ForeignDrop d : drops) {
                out.add(new Check("foreign drop", d.open(), d.describe(), d));
            }
            if (drops.isEmpty()) {
                out.add(new Check("other firewalls", true, "no other firewall drops forwarded traffic"));
            }
        } catch (RuntimeException e) {
            // A check that could not run is never reported as passed.
            out.add(new Check("other firewalls", false, "could not be checked: " + e.getMessage()));
        }
        return out;
    }

    /**
     * Published ports that a socket of the host holds too: a service that started listening
     * after the port was published (a publish refuses a port held already), whose traffic the
     * published port takes.
     */
    private List<Check> hostPortsInUse() {
        List<Check> out = new ArrayList<>();
        try {
            for (String line : drivers.with(GatunDriver::hostPortsInUse)) {
                out.add(new Check("host port in use", false, line));
            }
            if (out.isEmpty()) {
                out.add(new Check("host ports", true, "no socket of the host holds a published port"));
            }
        } catch (RuntimeException e) {
            out.add(new Check("host ports", false, "could not be checked: " + e.getMessage()));
        }
        return out;
    }

    /**
     * Every interface that routes 127.0.0.0/8 (route_localnet), whether gatun turned it on, and
     * whether gatun's drop of 127.0.0.0/8 from anywhere but lo guards it. One that gatun opened
     * and that is not guarded is a door to the host's loopback-only services.
     */
    private List<Check> localnetRoutes() {
        List<Check> out = new ArrayList<>();
        try {
            for (LocalnetRoute r : drivers.with(GatunDriver::localnetRoutes)) {
                out.add(new Check("route_localnet " + r.ifname(), r.guarded() || r.openedBy() == null, r.describe()));
            }
            if (out.isEmpty()) {
                out.add(new Check("route_localnet", true, "no interface routes 127.0.0.0/8"));
            }
        } catch (RuntimeException e) {
            out.add(new Check("route_localnet", false, "could not be checked: " + e.getMessage()));
        }
        return out;
    }

    private List<Check> bridges(NetworkNamespace host) {
        List<Check> out = new ArrayList<>();
        List<Network> networks;
        try {
            networks = drivers.with(d -> d.networks());
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
