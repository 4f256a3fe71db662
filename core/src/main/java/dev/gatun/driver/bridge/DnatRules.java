package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.InetText;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A published-port mapping as a DNAT rule in the iptables drivers' chain
 * {@value IptablesFirewall#DNAT}, both ways: the rule written for it, and the mapping read
 * back from iptables-save's line. The owner rides in the rule's comment.
 */
final class DnatRules {

    private static final Pattern RULE = Pattern.compile(
            "-A " + IptablesFirewall.DNAT + "(?: -d (\\S+?)(?:/\\d+)?)? -p (tcp|udp|sctp) -m \\2 --dport (\\d+) -m comment"
                    + " --comment \"?gatun owner=([^\" ]*)\"? -j DNAT --to-destination (\\S+)");

    private DnatRules() {}

    /**
     * The rule for a mapping, after the -A/-D. Addresses come from InetAddress, ports are ints,
     * the protocol an enum, and the owner is percent-encoded: nothing in it can end the comment
     * or start another option.
     */
    static String rule(PortMapping m) {
        StringBuilder r = new StringBuilder(IptablesFirewall.DNAT);
        if (m.hostIp() != null) {
            r.append(" -d ").append(InetText.of(m.hostIp())).append(m.hostIp() instanceof Inet4Address ? "/32" : "/128");
        }
        String proto = m.protocol().keyword();
        r.append(" -p ").append(proto).append(" -m ").append(proto).append(" --dport ").append(m.hostPort());
        r.append(" -m comment --comment \"gatun owner=").append(encode(m.owner())).append('"');
        String to = isV6(m) ? "[" + InetText.of(m.containerIp()) + "]" : InetText.of(m.containerIp());
        r.append(" -j DNAT --to-destination ").append(to).append(':').append(m.containerPort());
        return r.toString();
    }

    /** The mapping of one line of iptables-save; empty when the line is not one of gatun's DNAT rules. */
    static Optional<PortMapping> parse(String line) {
        Matcher m = RULE.matcher(line.strip());
        if (!m.matches()) {
            return Optional.empty();
        }
        String to = m.group(5);
        int colon = to.lastIndexOf(':');
        String address = to.substring(0, colon).replace("[", "").replace("]", "");
        return Optional.of(new PortMapping(null, Protocol.parse(m.group(2)),
                m.group(1) == null ? null : InetAddress.ofLiteral(m.group(1)), Integer.parseInt(m.group(3)),
                InetAddress.ofLiteral(address), Integer.parseInt(to.substring(colon + 1)),
                URLDecoder.decode(m.group(4), StandardCharsets.UTF_8)));
    }

    static String encode(String owner) {
        String e = URLEncoder.encode(owner, StandardCharsets.UTF_8).replace("+", "%20");
        if (!e.matches("[A-Za-z0-9%._*-]*")) {
            throw new InvalidInputException("owner '" + owner + "' cannot be written into a rule");
        }
        return e;
    }

    static boolean isV6(PortMapping m) {
        return !(m.containerIp() instanceof Inet4Address);
    }

    /** What makes two mappings collide: family, host address, protocol and host port. */
    static String key(PortMapping m) {
        return (isV6(m) ? "6 " : "4 ") + (m.hostIp() == null ? "*" : InetText.of(m.hostIp())) + " " + m.protocol() + " "
                + m.hostPort();
    }
}
