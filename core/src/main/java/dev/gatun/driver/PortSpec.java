package dev.gatun.driver;

import dev.gatun.InetText;
import dev.gatun.InvalidInputException;
import dev.gatun.rtnl.Prefix;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code -p} argument in Docker's syntax:
 * {@code [HOST_IP:][HOST_PORT[-END]:]CONTAINER_PORT[-END][/tcp|udp|sctp]}, IPv6 host addresses
 * in brackets ({@code [::1]:8080:80}). Without a host port, the host port is the container port.
 * A null host address means every local address.
 */
public record PortSpec(InetAddress hostIp, int hostStart, int hostEnd, int containerStart, int containerEnd,
                       Protocol protocol) {

    public PortSpec {
        checkPort(hostStart);
        checkPort(hostEnd);
        checkPort(containerStart);
        checkPort(containerEnd);
        if (hostEnd < hostStart) {
            throw new InvalidInputException("host port range " + hostStart + "-" + hostEnd + " is reversed");
        }
        if (containerEnd < containerStart) {
            throw new InvalidInputException("container port range " + containerStart + "-" + containerEnd + " is reversed");
        }
        if (hostEnd - hostStart != containerEnd - containerStart) {
            throw new InvalidInputException("host ports " + hostStart + "-" + hostEnd + " and container ports "
                    + containerStart + "-" + containerEnd + " are ranges of different lengths");
        }
    }

    /** Parses one -p argument; the error names the argument and what is wrong with it. */
    public static PortSpec parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new InvalidInputException("port spec must not be empty");
        }
        try {
            return parseChecked(spec);
        } catch (InvalidInputException e) {
            throw new InvalidInputException("port spec '" + spec + "': " + e.getMessage());
        }
    }

    private static PortSpec parseChecked(String spec) {
        String rest = spec;
        Protocol protocol = Protocol.TCP;
        int slash = rest.lastIndexOf('/');
        if (slash >= 0) {
            protocol = Protocol.parse(rest.substring(slash + 1));
            rest = rest.substring(0, slash);
        }
        String hostIp = null;
        String hostPorts = null;
        String containerPorts;
        if (rest.startsWith("[")) {
            int close = rest.indexOf(']');
            if (close < 0 || close + 1 >= rest.length() || rest.charAt(close + 1) != ':') {
                throw new InvalidInputException("an IPv6 host address in brackets must be followed by ':'");
            }
            hostIp = rest.substring(1, close);
            String[] p = rest.substring(close + 2).split(":", -1);
            if (p.length == 1) {
                containerPorts = p[0];
            } else if (p.length == 2) {
                hostPorts = p[0];
                containerPorts = p[1];
            } else {
                throw new InvalidInputException("too many ':'");
            }
        } else {
            String[] p = rest.split(":", -1);
            switch (p.length) {
                case 1 -> containerPorts = p[0];
                case 2 -> {
                    hostPorts = p[0];
                    containerPorts = p[1];
                }
                case 3 -> {
                    hostIp = p[0];
                    hostPorts = p[1];
                    containerPorts = p[2];
                }
                default -> throw new InvalidInputException("too many ':' (write IPv6 host addresses in brackets)");
            }
        }
        InetAddress ip = null;
        if (hostIp != null) {
            if (hostIp.isEmpty()) {
                throw new InvalidInputException("the host address is empty");
            }
            ip = Prefix.address(hostIp);
            if (ip instanceof Inet6Address && !rest.startsWith("[")) {
                throw new InvalidInputException("IPv6 host address " + hostIp + " must be in brackets");
            }
        }
        int[] container = range(containerPorts, "container port");
        int[] host = hostPorts == null || hostPorts.isEmpty() ? container : range(hostPorts, "host port");
        return new PortSpec(ip, host[0], host[1], container[0], container[1], protocol);
    }

    private static int[] range(String text, String what) {
        if (text.isEmpty()) {
            throw new InvalidInputException("the " + what + " is missing");
        }
        int dash = text.indexOf('-');
        if (dash < 0) {
            int p = port(text, what);
            return new int[] {p, p};
        }
        return new int[] {port(text.substring(0, dash), what), port(text.substring(dash + 1), what)};
    }

    private static int port(String text, String what) {
        if (!isDecimal(text)) {
            throw new InvalidInputException(what + " '" + text + "' is not a number");
        }
        int p = Integer.parseInt(text);
        checkPort(p);
        return p;
    }

    /** One to six ASCII digits (a loop: a regular expression here was compiled again for every port of every publish). */
    private static boolean isDecimal(String text) {
        if (text.isEmpty() || text.length() > 6) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static void checkPort(int p) {
        if (p < 1 || p > 65535) {
            throw new InvalidInputException("port " + p + " is out of range 1-65535");
        }
    }

    /** The port pairs this spec publishes, host port to container port. */
    public List<int[]> pairs() {
        List<int[]> out = new ArrayList<>();
        for (int i = 0; i <= hostEnd - hostStart; i++) {
            out.add(new int[] {hostStart + i, containerStart + i});
        }
        return out;
    }

    /** Back in Docker's syntax. */
    @Override
    public String toString() {
        String ip = hostIp == null ? "" : hostIp instanceof Inet6Address ? "[" + InetText.of(hostIp) + "]:"
                : InetText.of(hostIp) + ":";
        String h = hostStart == hostEnd ? Integer.toString(hostStart) : hostStart + "-" + hostEnd;
        String c = containerStart == containerEnd ? Integer.toString(containerStart) : containerStart + "-" + containerEnd;
        return ip + h + ":" + c + "/" + protocol.keyword();
    }
}
