package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Fib;
import dev.gatun.nft.expr.Immediate;
import dev.gatun.nft.expr.Log;
import dev.gatun.nft.expr.Lookup;
import dev.gatun.nft.expr.Masquerade;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.MetaSet;
import dev.gatun.nft.expr.Nat;
import dev.gatun.nft.expr.NatFlag;
import dev.gatun.nft.expr.Opaque;
import dev.gatun.nft.expr.Payload;
import dev.gatun.nft.expr.Range;
import dev.gatun.nft.expr.Redirect;
import dev.gatun.nft.expr.Registers;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns a rule's expressions back into an nft line. It follows the registers the way the
 * kernel would, names loads by the fields nft knows, and leaves out the protocol checks that
 * nft adds by itself in front of a field (so nft, reading the line, adds them again and the
 * bytecode comes out the same).
 */
final class RuleRenderer {

    /** What a register holds while the rule is read. */
    private sealed interface Value permits Load, Prefix, Masked, Data, MapResult, Raw {}

    private record Load(Field field, String words) implements Value {}

    private record Prefix(Field field, String words, int bytes) implements Value {}

    private record Masked(Value of, Bytes mask, Bytes xor) implements Value {}

    private record Data(Bytes bytes) implements Value {}

    private record MapResult(String key, String map) implements Value {}

    private record Raw(String words, int length) implements Value {}

    private final Family family;
    private final List<Expr> exprs;
    private final Map<Integer, Value> registers = new HashMap<>();
    /** Loads not yet consumed, by register: a lookup takes them all as one concatenated key. */
    private final TreeMap<Integer, Value> pending = new TreeMap<>();
    private final List<String> words = new ArrayList<>();
    private int transport = -1;

    private RuleRenderer(Rule rule) {
        this.family = rule.family();
        this.exprs = rule.expressions();
    }

    static String render(Rule rule) {
        RuleRenderer r = new RuleRenderer(rule);
        r.run();
        if (rule.comment() != null) {
            r.words.add("comment \"" + rule.comment() + "\"");
        }
        return String.join(" ", r.words);
    }

    private void run() {
        for (int i = 0; i < exprs.size(); i++) {
            Expr e = exprs.get(i);
            Expr next = i + 1 < exprs.size() ? exprs.get(i + 1) : null;
            switch (e) {
                case Payload p -> set(p.dreg(), payload(p));
                case Meta m -> set(m.dreg(), meta(m));
                case Ct c -> set(c.dreg(), ct(c));
                case Bitwise b -> set(b.dreg(), new Masked(take(b.sreg()), b.mask(), b.xor()));
                case Immediate im -> registers.put(im.dreg(), new Data(im.data()));
                case Cmp c -> {
                    if (i + 1 < exprs.size() && c.op() == CmpOp.GTE && next instanceof Cmp upper
                            && upper.op() == CmpOp.LTE && upper.sreg() == c.sreg()) {
                        Value v = take(c.sreg());
                        words.add(name(v) + " " + text(v, c.data()) + "-" + text(v, upper.data()));
                        i++;
                    } else {
                        compare(c, next);
                    }
                }
                case Range r -> {
                    Value v = take(r.sreg());
                    words.add(name(v) + (r.op() == CmpOp.NEQ ? " != " : " ") + text(v, r.from()) + "-" + text(v, r.to()));
                }
                case Lookup l -> lookup(l);
                case Fib f -> set(f.dreg(), new Load(null, f.result() == kernel_h.NFT_FIB_RESULT_ADDRTYPE
                        ? "fib daddr type" : f.result() == kernel_h.NFT_FIB_RESULT_OIF ? "fib daddr oif" : "fib daddr oifname"));
                case VerdictExpr v -> words.add(v.verdict().render());
                case Counter c -> words.add(c.packets() == 0 && c.bytes() == 0 ? "counter"
                        : "counter packets " + c.packets() + " bytes " + c.bytes());
                case Log l -> words.add(log(l));
                case Nat n -> words.add(nat(n));
                case Masquerade m -> words.add("masquerade" + to(m.protoMin()) + natFlags(m.flags()));
                case Redirect r -> words.add("redirect" + to(r.protoMin()) + natFlags(r.flags()));
                case Reject r -> words.add(reject(r));
                case MetaSet m -> words.add("meta " + m.key().keyword + " set " + setValue(m.key(), take(m.sreg())));
                case Opaque o -> {
                    words.add(OpaqueRenderer.render(o));
                    // It may have loaded any register; what they held before no longer names them.
                    registers.clear();
                    pending.clear();
                }
            }
        }
    }

    private void set(int reg, Value v) {
        registers.put(reg, v);
        pending.put(reg, v);
    }

    private Value take(int reg) {
        pending.clear();
        Value v = registers.get(reg);
        return v == null ? new Raw("reg " + reg, 4) : v;
    }

    private Value payload(Payload p) {
        for (Field f : Field.values()) {
            boolean protocolSpecific = f.dependency == Field.Dependency.TCP || f.dependency == Field.Dependency.UDP
                    || f.dependency == Field.Dependency.SCTP;
            if (f.isPayload() && !protocolSpecific && f.base == p.base() && f.offset == p.offset()) {
                String name = transportName(f);
                if (f.length() == p.length()) {
                    return new Load(f, name);
                }
                if (p.length() < f.length() && (f.type == DataType.IPV4_ADDR || f.type == DataType.IPV6_ADDR)) {
                    return new Prefix(f, name, p.length());
                }
            }
        }
        return new Raw("@" + p.base().raw + "," + p.offset() * 8 + "," + p.length() * 8, p.length());
    }

    /** th dport becomes tcp dport after a tcp match, as nft prints it. */
    private String transportName(Field f) {
        if (f != Field.TH_DPORT && f != Field.TH_SPORT) {
            return f.words;
        }
        String port = f == Field.TH_DPORT ? " dport" : " sport";
        if (transport == libc_h.IPPROTO_TCP) {
            return "tcp" + port;
        }
        if (transport == libc_h.IPPROTO_UDP) {
            return "udp" + port;
        }
        if (transport == libc_h.IPPROTO_SCTP) {
            return "sctp" + port;
        }
        return f.words;
    }

    private static Value ct(Ct c) {
        String words = "ct " + (c.direction() == null ? "" : c.direction() == 0 ? "original " : "reply ") + c.key().keyword;
        for (Field f : Field.values()) {
            if (f.ct == c.key() && c.direction() == null) {
                return new Load(f, f.words);
            }
        }
        return new Load(null, words);
    }

    private Value meta(Meta m) {
        for (Field f : Field.values()) {
            if (f.meta == m.key()) {
                return new Load(f, f.words);
            }
        }
        return new Load(null, "meta " + m.key().keyword);
    }

    private void compare(Cmp c, Expr next) {
        Value v = take(c.sreg());
        if (c.op() == CmpOp.EQ && v instanceof Load l && isDependency(l, c.data(), next)) {
            if (l.field == Field.META_L4PROTO) {
                transport = c.data().get(0);
            }
            return;
        }
        if (v instanceof Load l && l.field == Field.META_L4PROTO && c.op() == CmpOp.EQ) {
            transport = c.data().get(0);
        }
        String op = c.op() == CmpOp.EQ ? " " : " " + c.op().symbol + " ";
        if (v instanceof Masked m && m.xor.isZero() && c.op() == CmpOp.NEQ && c.data().isZero() && m.of instanceof Load l
                && (l.words.equals("ct state") || l.words.equals("ct status"))) {
            KeywordTable bits = l.words.equals("ct state") ? NftKeywords.CT_STATES : NftKeywords.CT_STATUSES;
            words.add(l.words + " " + bits.words(HostOrder.int32(m.mask)));
            return;
        }
        if (v instanceof Masked m && m.xor.isZero() && BitwiseText.isPrefix(m.mask) && m.of instanceof Load l
                && l.field != null && (l.field.type == DataType.IPV4_ADDR || l.field.type == DataType.IPV6_ADDR)) {
            words.add(l.words + op + l.field.type.render(c.data()) + "/" + prefixLength(m.mask));
            return;
        }
        if (v instanceof Masked m) {
            // nft writes the operator out after a bitwise value: meta mark & 0x00002000 == 0x00002000.
            words.add(name(m.of) + BitwiseText.of(m.mask, m.xor, b -> text(m.of, b)) + " " + c.op().symbol + " "
                    + text(m.of, c.data()));
            return;
        }
        if (v instanceof Prefix p && p.bytes >= 0 && p.bytes <= Math.min(c.data().length(), p.field.type.length)) {
            byte[] full = new byte[p.field.type.length];
            System.arraycopy(c.data().raw(), 0, full, 0, p.bytes);
            words.add(p.words + op + p.field.type.render(Bytes.wrap(full)) + "/" + p.bytes * 8);
            return;
        }
        words.add(name(v) + op + text(v, c.data()));
    }

    /** The checks nft puts in front of a field by itself, which it would add again when reading the line. */
    private boolean isDependency(Load l, Bytes data, Expr next) {
        if (!(next instanceof Payload p)) {
            return false;
        }
        if (l.field == Field.META_NFPROTO) {
            return p.base() == Payload.Base.NETWORK && family.mixesNetworkProtocols();
        }
        if (l.field == Field.META_L4PROTO) {
            int proto = data.get(0);
            return p.base() == Payload.Base.TRANSPORT
                    && (proto == libc_h.IPPROTO_TCP || proto == libc_h.IPPROTO_UDP || proto == libc_h.IPPROTO_SCTP);
        }
        return l.words.equals("meta iiftype") && p.base() == Payload.Base.LINK;
    }

    /** What a statement sets: meta mark set meta mark | 0x00002000, meta mark set 0x00000005, meta mark set ct mark. */
    private static String setValue(Meta.Key key, Value v) {
        return switch (v) {
            case Masked m -> name(m.of) + BitwiseText.of(m.mask, m.xor, b -> text(m.of, b));
            case Data d -> key == Meta.Key.MARK ? DataType.MARK.render(d.bytes) : name(d);
            default -> name(v);
        };
    }

    private void lookup(Lookup l) {
        String key;
        if (!pending.isEmpty() && pending.firstKey() == l.sreg()) {
            List<String> parts = new ArrayList<>();
            for (Value v : pending.values()) {
                parts.add(name(v));
            }
            key = String.join(" . ", parts);
        } else {
            key = name(take(l.sreg()));
        }
        pending.clear();
        if (l.dreg() == null) {
            words.add(key + (l.inverted() ? " != @" : " @") + l.set());
        } else if (l.dreg() == Registers.VERDICT) {
            words.add(key + " vmap @" + l.set());
        } else {
            registers.put(l.dreg(), new MapResult(key, l.set()));
        }
    }

    private String nat(Nat n) {
        String out = n.type().keyword + (family == Family.INET ? " " + n.family().keyword() : "");
        Value addr = n.addrMin() == 0 ? null : registers.get(n.addrMin());
        if (addr instanceof MapResult m) {
            out += " to " + m.key + " map @" + m.map;
        } else if (addr instanceof Data d) {
            DataType t = d.bytes.length() == 16 ? DataType.IPV6_ADDR : DataType.IPV4_ADDR;
            String a = t.render(d.bytes);
            out += " to " + (t == DataType.IPV6_ADDR && n.protoMin() != 0 ? "[" + a + "]" : a) + port(n.protoMin());
        } else if (n.protoMin() != 0) {
            out += " to" + port(n.protoMin());
        }
        return out + natFlags(n.flags());
    }

    private String to(int portRegister) {
        String p = port(portRegister);
        return p.isEmpty() ? "" : " to " + p;
    }

    private String port(int reg) {
        if (reg == 0) {
            return "";
        }
        Value v = registers.get(reg);
        if (v instanceof Data d) {
            return ":" + DataType.INET_SERVICE.render(d.bytes);
        }
        return "";
    }

    /** The flags a user writes, in nft's order; the ones nft derives from the statement (a port given) are left out. */
    private static String natFlags(Set<NatFlag> flags) {
        List<String> out = new ArrayList<>();
        for (NatFlag f : List.of(NatFlag.PROTO_RANDOM, NatFlag.PROTO_RANDOM_FULLY, NatFlag.PERSISTENT)) {
            if (flags.contains(f)) {
                out.add(f.keyword);
            }
        }
        return out.isEmpty() ? "" : " " + String.join(",", out);
    }

    private String reject(Reject r) {
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

    private static String log(Log l) {
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

    private static String name(Value v) {
        return switch (v) {
            case Load l -> l.words;
            case Prefix p -> p.words;
            case Masked m -> name(m.of);
            case Raw r -> r.words;
            case Data d -> d.bytes.toString();
            case MapResult m -> m.key + " map @" + m.map;
        };
    }

    /** A compared value in nft's words, by what was loaded. */
    private static String text(Value v, Bytes data) {
        if (v instanceof Load l && l.field != null) {
            Field f = l.field;
            return switch (f) {
                case META_NFPROTO -> NftKeywords.NETWORK_PROTOCOLS.word(data.get(0)).orElse(Integer.toString(data.get(0)));
                // A direction is one bit: what is not original is the reply.
                case CT_DIRECTION -> NftKeywords.CT_DIRECTIONS.word(data.get(0)).orElse("reply");
                case META_IIF, META_OIF -> Integer.toString(HostOrder.int32(data));
                case META_IIFNAME, META_OIFNAME -> ifname(data);
                default -> f.type.render(data);
            };
        }
        if (v instanceof Load l && l.words.startsWith("fib daddr type")) {
            int type = HostOrder.int32(data);
            return NftKeywords.ADDRESS_TYPES.word(type).orElse(Integer.toString(type));
        }
        if (v instanceof Load l && l.words.equals("fib daddr oif")) {
            return Integer.toString(HostOrder.int32(data));
        }
        if (v instanceof Load l && l.words.equals("meta iiftype")) {
            return NftKeywords.INTERFACE_TYPES.word(HostOrder.int16(data)).orElse(Integer.toString(data.get(0)));
        }
        return "0x" + new BigInteger(1, data.raw()).toString(16);
    }

    private static String ifname(Bytes data) {
        byte[] raw = data.raw();
        int n = 0;
        while (n < raw.length && raw[n] != 0) {
            n++;
        }
        String name = new String(raw, 0, n, StandardCharsets.UTF_8);
        return "\"" + name + (n == raw.length && raw.length < libc_h.IFNAMSIZ ? "*" : "") + "\"";
    }

    private static int prefixLength(Bytes mask) {
        int n = 0;
        for (int i = 0; i < mask.length(); i++) {
            n += Integer.bitCount(mask.get(i));
        }
        return n;
    }
}
