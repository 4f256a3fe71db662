package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;

import java.util.stream.Collectors;

/** iptables-save and ip6tables-save of a variant, without the comment lines (they carry a time). */
final class IptablesState {

    private IptablesState() {}

    static String of(NetworkNamespace host, String variant) {
        String v4 = Oracle.in(host, "iptables-" + variant + "-save");
        String v6 = Oracle.in(host, "ip6tables-" + variant + "-save");
        return (v4 + v6).lines().filter(l -> !l.startsWith("#")).map(l -> l.replaceAll("\\[\\d+:\\d+\\]", "[0:0]"))
                .collect(Collectors.joining("\n"));
    }
}
