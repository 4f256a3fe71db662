package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.nft.expr.Log;
import dev.gatun.nft.expr.NatFlag;
import dev.gatun.nft.expr.Reject;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The nft words of statements that read no register: log, reject, and the flags of a NAT statement. */
final class StatementText {

    private StatementText() {}

    /** The flags a user writes, in nft's order; the ones nft derives from the statement (a port given) are left out. */
    static String natFlags(Set<NatFlag> flags) {
        List<String> out = new ArrayList<>();
        for (NatFlag f : List.of(NatFlag.PROTO_RANDOM, NatFlag.PROTO_RANDOM_FULLY, NatFlag.PERSISTENT)) {
            if (flags.contains(f)) {
                out.add(f.keyword);
            }
        }
        return out.isEmpty() ? "" : " " + String.join(",", out);
    }

    /** A plain {@code reject} is the port-unreachable of the rule's family (icmpx in inet, bridge and netdev). */
    static String reject(Reject r, Family family) {
        if (r.type() == kernel_h.NFT_REJECT_TCP_RST) {
            return "reject with tcp reset";
        }
        if (r.type() == kernel_h.NFT_REJECT_ICMPX_UNREACH && r.code() == kernel_h.NFT_REJECT_ICMPX_PORT_UNREACH) {
            return "reject";
        }
        if (r.type() == kernel_h.NFT_REJECT_ICMP_UNREACH
                && r.code() == (family == Family.IP6 ? kernel_h.ICMPV6_PORT_UNREACH : kernel_h.ICMP_PORT_UNREACH)) {
            return "reject";
        }
        if (r.type() == kernel_h.NFT_REJECT_ICMPX_UNREACH) {
            return "reject with icmpx " + r.code();
        }
        return "reject with " + (family == Family.IP6 ? "icmpv6 " : "icmp ") + r.code();
    }

    static String log(Log l) {
        StringBuilder s = new StringBuilder("log");
        if (l.prefix() != null) {
            s.append(" prefix \"").append(l.prefix()).append('"');
        }
        if (l.level() != null) {
            NftKeywords.LOG_LEVELS.word(l.level()).ifPresent(level -> s.append(" level ").append(level));
        }
        if (l.group() != null) {
            s.append(" group ").append(l.group());
        }
        return s.toString();
    }
}
