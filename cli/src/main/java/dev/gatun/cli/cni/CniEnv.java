package dev.gatun.cli.cni;


import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The CNI_* variables a runtime sets for one call, checked as the spec asks: what a verb needs
 * is present, and the container id and interface name are well-formed (else
 * {@link CniError#BAD_ENVIRONMENT}, naming the variable).
 */
public record CniEnv(String command, String containerId, String netns, String ifname, String args, String path,
                     Map<String, String> variables) {

    public static final List<String> VERBS = List.of("ADD", "DEL", "CHECK", "GC", "STATUS", "VERSION");

    /** Reads and checks the variables of {@code env} (a process's environment, or one a client forwarded). */
    public static CniEnv of(Map<String, String> env) {
        Map<String, String> cni = new LinkedHashMap<>();
        env.forEach((k, v) -> {
            if (k.startsWith("CNI_")) {
                cni.put(k, v);
            }
        });
        String command = empty(cni.get("CNI_COMMAND"));
        if (command == null) {
            throw new CniError(CniError.BAD_ENVIRONMENT, "CNI_COMMAND is not set");
        }
        if (!VERBS.contains(command)) {
            throw new CniError(CniError.BAD_ENVIRONMENT, "unknown CNI_COMMAND '" + command + "' (expected one of "
                    + String.join(", ", VERBS) + ")");
        }
        CniEnv e = new CniEnv(command, empty(cni.get("CNI_CONTAINERID")), empty(cni.get("CNI_NETNS")),
                empty(cni.get("CNI_IFNAME")), cni.get("CNI_ARGS"), empty(cni.get("CNI_PATH")), Map.copyOf(cni));
        e.check();
        return e;
    }

    private void check() {
        Set<String> needed = switch (command) {
            case "ADD", "CHECK" -> Set.of("CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH");
            case "DEL" -> Set.of("CNI_CONTAINERID", "CNI_IFNAME", "CNI_PATH");
            case "GC", "STATUS" -> Set.of("CNI_PATH");
            default -> Set.of();
        };
        List<String> missing = needed.stream().filter(v -> empty(variables.get(v)) == null).sorted().toList();
        if (!missing.isEmpty()) {
            throw new CniError(CniError.BAD_ENVIRONMENT, "required environment variables " + missing + " missing for "
                    + command);
        }
        if (containerId != null && !containerId.matches("[A-Za-z0-9][A-Za-z0-9_.\\-]*")) {
            throw new CniError(CniError.BAD_ENVIRONMENT, "CNI_CONTAINERID '" + containerId
                    + "' has characters other than letters, digits, '_', '.' and '-', or does not start with a letter or digit");
        }
        if (ifname != null) {
            String why = ifname.getBytes(StandardCharsets.UTF_8).length > 15 ? "is longer than 15 bytes"
                    : ifname.equals(".") || ifname.equals("..") ? "is '.' or '..'"
                    : ifname.chars().anyMatch(c -> c == '/' || c == ':' || Character.isWhitespace(c))
                    ? "contains '/', ':' or white space" : null;
            if (why != null) {
                throw new CniError(CniError.BAD_ENVIRONMENT, "CNI_IFNAME '" + ifname + "' " + why);
            }
        }
    }

    private static String empty(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
