package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

import java.net.Inet6Address;
import java.net.InetAddress;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The text of a link's alias (IFLA_IFALIAS) as gatun writes it: a kind, then key=value fields,
 * "gatun-network name=n1 v4=10.88.0.0%2F16 ...". Values are percent-encoded, so any owner
 * string survives. {@link NetworkAlias} and {@link EndpointAlias} give the fields meaning.
 */
final class AliasFields {

    /** The kernel keeps at most 255 bytes of alias. */
    static final int MAX_BYTES = 255;

    /** Unreadable aliases already warned about, by link name and alias text. */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();
    private static final int MAX_WARNED = 1024;

    private AliasFields() {}

    /**
     * The alias of {@code kind} with the fields that are not null, in their order; refused when
     * it would not fit, with {@code what} naming the thing described.
     */
    static String encode(String kind, Map<String, String> fields, String what) {
        StringBuilder s = new StringBuilder(kind);
        for (var e : fields.entrySet()) {
            if (e.getValue() != null) {
                s.append(' ').append(e.getKey()).append('=')
                        .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
            }
        }
        if (s.toString().getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new InvalidInputException("the description of " + what + " does not fit in a link alias ("
                    + MAX_BYTES + " bytes); use shorter names or owner ids");
        }
        return s.toString();
    }

    /**
     * The fields of an alias of this kind; empty when the alias is not one (another tool's, or
     * none). Parts without '=' and unknown keys are left for the caller to ignore; a value that
     * is not valid percent-encoding is a {@link MalformedAliasException}.
     */
    static Optional<Decoded> decode(String kind, String alias) {
        if (alias == null || !alias.startsWith(kind + " ")) {
            return Optional.empty();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (String part : alias.substring(kind.length() + 1).split(" ")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                try {
                    out.put(part.substring(0, eq), URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8));
                } catch (IllegalArgumentException e) {
                    throw new MalformedAliasException(alias, "field " + part.substring(0, eq) + " is not percent-encoded");
                }
            }
        }
        return Optional.of(new Decoded(alias, out));
    }

    /**
     * A link's alias as {@code decode} reads it; empty when it is not gatun's, and when it
     * claims to be but cannot be read: that link is left out of a listing with a warning, since
     * one bad alias must not make every network unreadable.
     */
    static <T> Optional<T> readable(Link link, Function<String, Optional<T>> decode) {
        try {
            return decode.apply(link.alias());
        } catch (MalformedAliasException e) {
            // Once per link and alias: a serve lists networks at every link change, and would
            // repeat the warning each time. Bounded, as links come and go.
            if (WARNED.size() < MAX_WARNED && WARNED.add(link.name() + " " + link.alias())) {
                System.getLogger("dev.gatun").log(System.Logger.Level.WARNING, "link {0} left out: {1}", link.name(),
                        e.getMessage());
            }
            return Optional.empty();
        }
    }

    /** The fields of one alias, read as values of a type; a missing or bad one names the alias. */
    record Decoded(String alias, Map<String, String> fields) {

        /** The field's text; null when it is absent. */
        String optional(String key) {
            return fields.get(key);
        }

        String text(String key) {
            String v = fields.get(key);
            if (v == null || v.isEmpty()) {
                throw new MalformedAliasException(alias, "field " + key + " is missing");
            }
            return v;
        }

        boolean flag(String key) {
            return "1".equals(fields.get(key));
        }

        /** An address of the family asked for; null when absent and not {@code required}. */
        InetAddress address(String key, boolean ipv6, boolean required) {
            String v = required ? text(key) : fields.get(key);
            if (v == null) {
                return null;
            }
            try {
                InetAddress a = Prefix.address(v);
                if (a instanceof Inet6Address != ipv6) {
                    throw new MalformedAliasException(alias, "field " + key + " is not an " + (ipv6 ? "IPv6" : "IPv4")
                            + " address");
                }
                return a;
            } catch (InvalidInputException e) {
                throw new MalformedAliasException(alias, "field " + key + ": " + e.getMessage());
            }
        }

        /** A subnet of the family asked for; null when absent and not {@code required}. */
        Prefix prefix(String key, boolean ipv6, boolean required) {
            String v = required ? text(key) : fields.get(key);
            if (v == null) {
                return null;
            }
            try {
                Prefix p = Prefix.parse(v);
                if (p.isIpv6() != ipv6) {
                    throw new MalformedAliasException(alias, "field " + key + " is not an " + (ipv6 ? "IPv6" : "IPv4")
                            + " subnet");
                }
                return p;
            } catch (InvalidInputException e) {
                throw new MalformedAliasException(alias, "field " + key + ": " + e.getMessage());
            }
        }

        MacAddress mac(String key) {
            try {
                return MacAddress.parse(text(key));
            } catch (InvalidInputException e) {
                throw new MalformedAliasException(alias, "field " + key + ": " + e.getMessage());
            }
        }

        /** A whole number; null when absent. */
        Long number(String key) {
            String v = fields.get(key);
            if (v == null) {
                return null;
            }
            try {
                return Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw new MalformedAliasException(alias, "field " + key + " is not a number: " + v);
            }
        }
    }
}
