package dev.gatun.cli.cni;

import dev.gatun.InvalidInputException;
import dev.gatun.cli.service.Drivers;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.netns.NetworkNamespace;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One call of the plugin as the verbs see it: its CNI_* variables, its config, the driver it may
 * borrow, and the lines it logs on stderr; and the names of what an attachment owns.
 */
record CniCall(CniEnv env, CniConfig config, Drivers drivers, StringBuilder log) {

    /** The owner of what an attachment makes: "CONTAINERID/IFNAME", with "@NETWORK" when chained. */
    static String owner(String containerId, String ifname) {
        return containerId + "/" + ifname;
    }

    /** An owner gatun's CNI plugin made: "ID/IFNAME" (main) or "ID/IFNAME@NETWORK" (chained). */
    static boolean isCniOwner(String owner) {
        return owner.matches("[A-Za-z0-9][A-Za-z0-9_.\\-]*/[^/:\\s]{1,15}(@[A-Za-z0-9][A-Za-z0-9_.-]{0,63})?");
    }

    String owner() {
        return owner(env.containerId(), env.ifname());
    }

    /** Chained mappings are on no network of gatun's: the owner says which CNI network GC may collect them for. */
    String chainedOwner() {
        return owner() + "@" + config.name();
    }

    NetworkNamespace namespace() {
        try {
            return NetworkNamespace.at(env.netns());
        } catch (InvalidInputException e) {
            throw new CniError(CniError.BAD_ENVIRONMENT, "CNI_NETNS " + env.netns() + ": " + e.getMessage());
        }
    }

    /** The config's port mappings that go to {@code containerIp}: those of its family, or of no host address. */
    List<PortSpec> specs(InetAddress containerIp) {
        boolean four = containerIp instanceof Inet4Address;
        List<PortSpec> out = new ArrayList<>();
        for (CniConfig.PortMapping m : config.portMappings()) {
            if (m.hostIp() == null || (m.hostIp() instanceof Inet4Address) == four) {
                out.add(new PortSpec(m.hostIp(), m.hostPort(), m.hostPort(), m.containerPort(), m.containerPort(),
                        m.protocol()));
            }
        }
        return out;
    }

    /** The addresses that {@code owner}'s mappings among {@code mappings} go to. */
    static Set<InetAddress> containerIps(List<PortMapping> mappings, String owner) {
        Set<InetAddress> out = new LinkedHashSet<>();
        for (PortMapping m : mappings) {
            if (m.owner().equals(owner)) {
                out.add(m.containerIp());
            }
        }
        return out;
    }

    /** The config's port mappings to {@code addresses} that {@code published} lacks for {@code who}, each named. */
    List<String> missingMappings(List<InetAddress> addresses, List<PortMapping> published, String who) {
        List<String> out = new ArrayList<>();
        for (InetAddress ip : addresses) {
            for (PortSpec p : specs(ip)) {
                boolean present = published.stream().anyMatch(m -> m.owner().equals(who)
                        && m.protocol() == p.protocol() && m.hostPort() == p.hostStart()
                        && Objects.equals(m.hostIp(), p.hostIp()) && m.containerIp().equals(ip)
                        && m.containerPort() == p.containerStart());
                if (!present) {
                    out.add("port mapping " + new PortMapping(null, p.protocol(), p.hostIp(), p.hostStart(), ip,
                            p.containerStart(), who).describe());
                }
            }
        }
        return out;
    }

    void log(String line) {
        log.append("gatun: ").append(line).append('\n');
    }
}
