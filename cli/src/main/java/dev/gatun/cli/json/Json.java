package dev.gatun.cli.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gatun.cli.service.Drained;
import dev.gatun.driver.Replacement;
import dev.gatun.cli.service.DoctorReport;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.InetText;
import dev.gatun.rtnl.Prefix;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON documents of the CLI's --json output and of the local API's replies, field by field
 * as documented: one shape for each result, whichever entry point asked.
 */
public final class Json {

    /**
     * For documents of other types than {@link #text} writes itself; made at the first such only:
     * setting up Jackson's data binding makes a one-shot publish ~1.06x as long (README), and
     * holds some 6 MiB more in a serve.
     */
    private static final class Mapper {
        static final ObjectMapper INSTANCE = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    private static final JsonFactory FACTORY = new JsonFactory();

    private Json() {}

    /**
     * A document as gatun prints it: indented, without a final newline. Maps, collections,
     * strings, numbers, booleans and null (every document of this class's) go through Jackson's
     * generator alone, as its data binding would print them; anything else through the binding.
     */
    public static String text(Object document) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.setPrettyPrinter(new DefaultPrettyPrinter());
            write(g, document);
        } catch (NotPlain e) {
            try {
                return Mapper.INSTANCE.writeValueAsString(document);
            } catch (JsonProcessingException x) {
                throw new IllegalStateException("cannot write JSON", x);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write JSON", e);
        }
        return out.toString();
    }

    /** A value {@link #write} does not take: the document goes to the data binding instead. */
    private static final class NotPlain extends RuntimeException {
        NotPlain() {
            super(null, null, false, false);
        }
    }

    private static void write(JsonGenerator g, Object v) throws IOException {
        switch (v) {
            case null -> g.writeNull();
            case String s -> g.writeString(s);
            case Boolean b -> g.writeBoolean(b);
            case Integer i -> g.writeNumber(i);
            case Long l -> g.writeNumber(l);
            case Double d -> g.writeNumber(d);
            case Map<?, ?> m -> {
                g.writeStartObject();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!(e.getKey() instanceof String key)) {
                        throw new NotPlain();
                    }
                    g.writeFieldName(key);
                    write(g, e.getValue());
                }
                g.writeEndObject();
            }
            case Collection<?> c -> {
                g.writeStartArray();
                for (Object x : c) {
                    write(g, x);
                }
                g.writeEndArray();
            }
            default -> throw new NotPlain();
        }
    }

    public static Map<String, Object> network(Network n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", n.name());
        m.put("bridge", n.bridge());
        m.put("mac", n.mac() == null ? null : n.mac().toString());
        m.put("subnets", n.subnets().stream().map(Prefix::toString).toList());
        m.put("gateways", n.gateways().stream().map(Json::ip).toList());
        m.put("icc", n.icc());
        m.put("internal", n.internal());
        m.put("mtu", n.mtu());
        m.put("counters", n.counters());
        return m;
    }

    public static Map<String, Object> endpoint(Endpoint e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("network", e.network());
        m.put("containerNetns", e.containerNamespace());
        m.put("ifname", e.ifname());
        m.put("hostIfname", e.hostIfname());
        m.put("ip", ip(e.ip()));
        m.put("ip6", ip(e.ip6()));
        m.put("mac", e.mac().toString());
        m.put("owner", e.owner());
        return m;
    }

    public static Map<String, Object> mapping(PortMapping p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("network", p.network());
        m.put("protocol", p.protocol().keyword());
        m.put("hostIp", ip(p.hostIp()));
        m.put("hostPort", p.hostPort());
        m.put("containerIp", ip(p.containerIp()));
        m.put("containerPort", p.containerPort());
        m.put("owner", p.owner());
        return m;
    }

    public static List<Map<String, Object>> mappings(List<PortMapping> list) {
        return list.stream().map(Json::mapping).toList();
    }

    /** A replacing publish: the mappings now in place, and the other owners' mappings they took the keys of. */
    public static Map<String, Object> replacement(Replacement r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("published", mappings(r.published()));
        m.put("replaced", mappings(r.replaced()));
        return m;
    }

    /** An unpublish that drained: what it removed, and the established connections left at its timeout. */
    public static Map<String, Object> drained(Drained d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("unpublished", mappings(d.removed()));
        m.put("remaining", d.remaining());
        return m;
    }

    /** Mappings with their counts: packets and bytes, null where the mapping's network has no counters. */
    public static List<Map<String, Object>> traffic(List<PortTraffic> list) {
        return list.stream().map(t -> {
            Map<String, Object> m = mapping(t.mapping());
            m.put("packets", t.traffic() == null ? null : t.traffic().packets());
            m.put("bytes", t.traffic() == null ? null : t.traffic().bytes());
            return m;
        }).toList();
    }

    public static String ip(InetAddress a) {
        return a == null ? null : InetText.of(a);
    }

    public static Map<String, Object> error(int code, String message) {
        Map<String, Object> inner = new LinkedHashMap<>();
        inner.put("code", code);
        inner.put("message", message);
        return Map.of("error", inner);
    }

    public static Map<String, Object> deleted(String network) {
        return Map.of("deleted", network);
    }

    public static Map<String, Object> detached(String container, String network) {
        return Map.of("detached", container, "network", network);
    }

    public static Map<String, Object> ruleset(String text) {
        return Map.of("ruleset", text);
    }

    public static List<Map<String, Object>> doctor(DoctorReport report) {
        List<Map<String, Object>> doc = new ArrayList<>();
        for (DoctorReport.Check c : report.checks()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("check", c.check());
            m.put("ok", c.ok());
            m.put("detail", c.detail());
            if (c.drop() != null) {
                m.put("firewall", c.drop().firewall());
                m.put("where", c.drop().where());
                m.put("why", c.drop().why());
                m.put("action", c.drop().action());
            }
            doc.add(m);
        }
        return doc;
    }
}
