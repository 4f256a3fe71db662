package dev.gatun.cli.cni;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.Prefix;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The network configuration a runtime sends on stdin, as far as gatun reads it: the keys of the
 * reference {@code bridge} plugin that users rely on, gatun's own {@code icc}, {@code internal}
 * and {@code counters}, {@code ipam}, {@code prevResult} (which makes gatun a chained plugin),
 * {@code runtimeConfig.portMappings} and GC's valid attachments. Unknown keys are ignored, as
 * libcni expects; a known key with a wrong value is {@link CniError#INVALID_CONFIG}, naming it.
 *
 * @param raw the whole config, handed unchanged to the IPAM plugin
 */
public record CniConfig(String cniVersion, String name, String type, String bridge, boolean isGateway,
                        boolean isDefaultGateway, boolean ipMasq, boolean hairpinMode, Integer mtu, boolean icc,
                        boolean internal, boolean counters, String ipamType, ObjectNode prevResult, List<PortMapping> portMappings,
                        Set<String> validAttachments, byte[] raw) {

    static final ObjectMapper JSON = new ObjectMapper();

    /** One entry of {@code runtimeConfig.portMappings}; {@code hostIp} null for every address. */
    public record PortMapping(int hostPort, int containerPort, Protocol protocol, InetAddress hostIp) {}

    /** Parses the config of every verb but VERSION (whose stdin may carry only a version, and is not read). */
    public static CniConfig parse(byte[] stdin) {
        ObjectNode o = object(stdin);
        String version = text(o, "cniVersion");
        if (version == null) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION, "the config has no cniVersion (gatun speaks "
                    + String.join(", ", CniVersion.SUPPORTED) + ")");
        }
        if (!CniVersion.isSupported(version)) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION, "cniVersion " + version + " is not one gatun speaks ("
                    + String.join(", ", CniVersion.SUPPORTED) + ")");
        }
        String name = text(o, "name");
        if (name == null || name.isEmpty()) {
            throw invalid("the config has no network name (key name)");
        }
        if (!name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
            throw invalid("network name '" + name + "' must be 1 to 64 letters, digits, '_', '.' or '-', "
                    + "starting with a letter or digit");
        }
        String bridge = text(o, "bridge");
        Integer mtu = null;
        JsonNode m = o.get("mtu");
        if (m != null && !m.isNull()) {
            if (!m.isIntegralNumber() || m.asLong() < 68 || m.asLong() > 65535) {
                throw invalid("mtu " + m + " is not an MTU (68-65535)");
            }
            mtu = m.asInt();
        }
        boolean isDefaultGateway = bool(o, "isDefaultGateway", false);
        String ipamType = null;
        JsonNode ipam = o.get("ipam");
        if (ipam != null && !ipam.isNull()) {
            if (!ipam.isObject()) {
                throw invalid("ipam " + ipam + " is not an object");
            }
            ipamType = text((ObjectNode) ipam, "ipam.type");
            if (ipamType != null && (ipamType.isEmpty() || ipamType.contains("/"))) {
                throw invalid("ipam.type '" + ipamType + "' is not the name of a plugin");
            }
        }
        JsonNode prev = o.get("prevResult");
        if (prev != null && !prev.isNull() && !prev.isObject()) {
            throw invalid("prevResult " + prev + " is not an object");
        }
        return new CniConfig(version, name, text(o, "type"), bridge == null || bridge.isEmpty() ? null : bridge,
                bool(o, "isGateway", false) || isDefaultGateway, isDefaultGateway, bool(o, "ipMasq", false),
                bool(o, "hairpinMode", false), mtu, bool(o, "icc", true), bool(o, "internal", false),
                bool(o, "counters", false), ipamType,
                prev == null || prev.isNull() ? null : (ObjectNode) prev, portMappings(o), attachments(o), stdin);
    }

    /** The version the stdin asks for, for an error document, when it can be read; else null. */
    static String versionOf(byte[] stdin) {
        try {
            JsonNode v = JSON.readTree(stdin).get("cniVersion");
            return v != null && v.isTextual() ? v.asText() : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    static ObjectNode object(byte[] stdin) {
        JsonNode tree;
        try {
            tree = JSON.readTree(stdin);
        } catch (JsonProcessingException e) {
            throw new CniError(CniError.DECODE, "the config on stdin is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new CniError(CniError.DECODE, "the config on stdin cannot be read: " + e.getMessage());
        }
        if (tree == null || tree.isMissingNode()) {
            throw new CniError(CniError.DECODE, "the config on stdin is empty");
        }
        if (!tree.isObject()) {
            throw new CniError(CniError.DECODE, "the config on stdin must be a JSON object, not " + tree.getNodeType());
        }
        return (ObjectNode) tree;
    }

    private static List<PortMapping> portMappings(ObjectNode o) {
        JsonNode rc = o.get("runtimeConfig");
        if (rc == null || rc.isNull()) {
            return List.of();
        }
        if (!rc.isObject()) {
            throw invalid("runtimeConfig " + rc + " is not an object");
        }
        JsonNode list = rc.get("portMappings");
        if (list == null || list.isNull()) {
            return List.of();
        }
        if (!list.isArray()) {
            throw invalid("runtimeConfig.portMappings " + list + " is not an array");
        }
        List<PortMapping> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode e = list.get(i);
            String at = "runtimeConfig.portMappings[" + i + "]";
            if (!e.isObject()) {
                throw invalid(at + " " + e + " is not an object");
            }
            JsonNode hostPort = null, containerPort = null, protocol = null, hostIp = null;
            // containerd and nerdctl send HostPort, ContainerPort, Protocol, HostIP; Podman hostPort, ...
            for (Iterator<Map.Entry<String, JsonNode>> it = e.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                switch (f.getKey().toLowerCase(Locale.ROOT)) {
                    case "hostport" -> hostPort = f.getValue();
                    case "containerport" -> containerPort = f.getValue();
                    case "protocol" -> protocol = f.getValue();
                    case "hostip" -> hostIp = f.getValue();
                    default -> { }
                }
            }
            int host = port(hostPort, at + ".hostPort", true);
            int container = port(containerPort, at + ".containerPort", false);
            Protocol proto = Protocol.TCP;
            if (protocol != null && !protocol.isNull()) {
                if (!protocol.isTextual()) {
                    throw invalid(at + ".protocol " + protocol + " is not a string");
                }
                String p = protocol.asText().toLowerCase(Locale.ROOT);
                if (!p.isEmpty()) {
                    try {
                        proto = Protocol.parse(p);
                    } catch (InvalidInputException x) {
                        throw invalid(at + ".protocol '" + protocol.asText() + "' is not tcp, udp or sctp");
                    }
                }
            }
            InetAddress ip = null;
            if (hostIp != null && !hostIp.isNull()) {
                if (!hostIp.isTextual()) {
                    throw invalid(at + ".hostIP " + hostIp + " is not a string");
                }
                if (!hostIp.asText().isEmpty()) {
                    String text = hostIp.asText();
                    try {
                        if (!text.contains(":") && !text.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
                            throw new InvalidInputException("not dotted-quad");
                        }
                        ip = Prefix.address(text);
                    } catch (InvalidInputException x) {
                        throw invalid(at + ".hostIP '" + hostIp.asText() + "' is not an IP address");
                    }
                    if (ip.isAnyLocalAddress()) {
                        ip = null;
                    }
                }
            }
            if (host == 0) {
                continue; // no host port: nothing to publish (as portmap does)
            }
            out.add(new PortMapping(host, container, proto, ip));
        }
        return List.copyOf(out);
    }

    private static int port(JsonNode n, String what, boolean zeroAllowed) {
        if (n == null || n.isNull()) {
            if (zeroAllowed) {
                return 0;
            }
            throw invalid(what + " is missing");
        }
        if (!n.isIntegralNumber()) {
            throw invalid(what + " " + n + " is not a number");
        }
        long v = n.asLong();
        if (v < (zeroAllowed ? 0 : 1) || v > 65535) {
            throw invalid(what + " " + v + " is not a port (1-65535)");
        }
        return (int) v;
    }

    /** GC's attachments still in use, as "containerID/ifname" (1.1.0's key, and the older one libcni also sends). */
    private static Set<String> attachments(ObjectNode o) {
        Set<String> out = null;
        for (String key : List.of("cni.dev/valid-attachments", "cni.dev/attachments")) {
            JsonNode list = o.get(key);
            if (list == null || list.isNull()) {
                continue;
            }
            if (!list.isArray()) {
                throw invalid(key + " " + list + " is not an array");
            }
            out = out == null ? new HashSet<>() : out;
            for (int i = 0; i < list.size(); i++) {
                JsonNode a = list.get(i);
                JsonNode id = a.get("containerID");
                JsonNode ifname = a.get("ifname");
                if (id == null || !id.isTextual() || ifname == null || !ifname.isTextual()) {
                    throw invalid(key + "[" + i + "] " + a + " needs containerID and ifname strings");
                }
                out.add(CniCall.owner(id.asText(), ifname.asText()));
            }
        }
        return out == null ? null : Set.copyOf(out);
    }

    private static String text(ObjectNode o, String key) {
        String k = key.substring(key.lastIndexOf('.') + 1);
        JsonNode n = o.get(k);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual()) {
            throw invalid(key + " " + n + " is not a string");
        }
        return n.asText();
    }

    private static boolean bool(ObjectNode o, String key, boolean otherwise) {
        JsonNode n = o.get(key);
        if (n == null || n.isNull()) {
            return otherwise;
        }
        if (!n.isBoolean()) {
            throw invalid(key + " " + n + " is not true or false");
        }
        return n.asBoolean();
    }

    static CniError invalid(String msg) {
        return new CniError(CniError.INVALID_CONFIG, msg);
    }

    /** Whether gatun runs chained after another plugin (a prevResult came) rather than as the main plugin. */
    public boolean chained() {
        return prevResult != null;
    }
}
