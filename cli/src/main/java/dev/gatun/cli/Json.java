package dev.gatun.cli;

import dev.gatun.driver.Endpoint;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.InetText;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON shapes of the command's output, field by field as documented. */
final class Json {

    private Json() {}

    static Map<String, Object> network(Network n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", n.name());
        m.put("bridge", n.bridge());
        m.put("mac", n.mac() == null ? null : n.mac().toString());
        m.put("subnets", n.subnets().stream().map(Prefix::toString).toList());
        m.put("gateways", n.gateways().stream().map(Json::ip).toList());
        m.put("icc", n.icc());
        m.put("internal", n.internal());
        m.put("mtu", n.mtu());
        return m;
    }

    static Map<String, Object> endpoint(Endpoint e) {
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

    static Map<String, Object> mapping(PortMapping p) {
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

    static List<Map<String, Object>> mappings(List<PortMapping> list) {
        return list.stream().map(Json::mapping).toList();
    }

    static String ip(InetAddress a) {
        return a == null ? null : InetText.of(a);
    }

    static Map<String, Object> error(int code, String message) {
        Map<String, Object> inner = new LinkedHashMap<>();
        inner.put("code", code);
        inner.put("message", message);
        return Map.of("error", inner);
    }
}
