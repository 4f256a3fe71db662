package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Family;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.nft.RegisterValue.Data;
import dev.gatun.nft.RegisterValue.Load;
import dev.gatun.nft.RegisterValue.MapResult;
import dev.gatun.nft.RegisterValue.Masked;
import dev.gatun.nft.RegisterValue.Prefix;
import dev.gatun.nft.RegisterValue.Raw;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Dynset;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Fib;
import dev.gatun.nft.expr.Immediate;
import dev.gatun.nft.expr.Log;
import dev.gatun.nft.expr.Lookup;
import dev.gatun.nft.expr.Masquerade;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.MetaSet;
import dev.gatun.nft.expr.Nat;
import dev.gatun.nft.expr.Opaque;
import dev.gatun.nft.expr.Payload;
import dev.gatun.nft.expr.Range;
import dev.gatun.nft.expr.Redirect;
import dev.gatun.nft.expr.Registers;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import static dev.gatun.nft.RegisterValue.name;
import static dev.gatun.nft.RegisterValue.setValue;
import static dev.gatun.nft.RegisterValue.text;

/**
 * Turns a rule's expressions back into an nft line. It follows the registers the way the
 * kernel would, names loads by the fields nft knows, and leaves out the protocol checks that
 * nft adds by itself in front of a field (so nft, reading the line, adds them again and the
 * bytecode comes out the same).
 */
final class RuleRenderer {

    private final Family family;
    private final List<Expr> exprs;
    private final Map<Integer, RegisterValue> registers = new HashMap<>();
    /** Loads not yet consumed, by register: a lookup takes them all as one concatenated key. */
    private final TreeMap<Integer, RegisterValue> pending = new TreeMap<>();
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
                        RegisterValue v = take(c.sreg());
                        words.add(name(v) + " " + text(v, c.data()) + "-" + text(v, upper.data()));
                        i++;
                    } else {
                        compare(c, next);
                    }
                }
                case Range r -> {
                    RegisterValue v = take(r.sreg());
                    words.add(name(v) + (r.op() == CmpOp.NEQ ? " != " : " ") + text(v, r.from()) + "-" + text(v, r.to()));
                }
                case Lookup l -> lookup(l);
                case Dynset d -> words.add(d.op().keyword + " @" + d.set() + " { " + key(d.sreg())
                        + (d.timeout() == null ? "" : " timeout " + NftRenderer.duration(d.timeout())) + " }");
                case Fib f -> set(f.dreg(), new Load(null, f.result() == kernel_h.NFT_FIB_RESULT_ADDRTYPE
                        ? "fib daddr type" : f.result() == kernel_h.NFT_FIB_RESULT_OIF ? "fib daddr oif" : "fib daddr oifname"));
                case VerdictExpr v -> words.add(v.verdict().render());
                case Counter c -> words.add(c.packets() == 0 && c.bytes() == 0 ? "counter"
                        : "counter packets " + c.packets() + " bytes " + c.bytes());
                case Log l -> words.add(StatementText.log(l));
                case Nat n -> words.add(nat(n));
                case Masquerade m -> words.add("masquerade" + to(m.protoMin()) + StatementText.natFlags(m.flags()));
                case Redirect r -> words.add("redirect" + to(r.protoMin()) + StatementText.natFlags(r.flags()));
                case Reject r -> words.add(StatementText.reject(r, family));
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

    private void set(int reg, RegisterValue v) {
        registers.put(reg, v);
        pending.put(reg, v);
    }

    private RegisterValue take(int reg) {
        pending.clear();
        RegisterValue v = registers.get(reg);
        return v == null ? new Raw("reg " + reg, 4) : v;
    }

    private RegisterValue payload(Payload p) {
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

    private static RegisterValue ct(Ct c) {
        String words = "ct " + (c.direction() == null ? "" : c.direction() == 0 ? "original " : "reply ") + c.key().keyword;
        for (Field f : Field.values()) {
            if (f.ct == c.key() && Objects.equals(f.ctDirection, c.direction())) {
                return new Load(f, f.words);
            }
        }
        return new Load(null, words);
    }

    private RegisterValue meta(Meta m) {
        for (Field f : Field.values()) {
            if (f.meta == m.key()) {
                return new Load(f, f.words);
            }
        }
        return new Load(null, "meta " + m.key().keyword);
    }

    private void compare(Cmp c, Expr next) {
        RegisterValue v = take(c.sreg());
        if (c.op() == CmpOp.EQ && v instanceof Load l && isDependency(l, c.data(), next)) {
            if (l.field() == Field.META_L4PROTO) {
                transport = c.data().get(0);
            }
            return;
        }
        if (v instanceof Load l && l.field() == Field.META_L4PROTO && c.op() == CmpOp.EQ) {
            transport = c.data().get(0);
        }
        String op = c.op() == CmpOp.EQ ? " " : " " + c.op().symbol + " ";
        if (v instanceof Masked m && m.xor().isZero() && c.op() == CmpOp.NEQ && c.data().isZero() && m.of() instanceof Load l
                && (l.words().equals("ct state") || l.words().equals("ct status"))) {
            KeywordTable bits = l.words().equals("ct state") ? NftKeywords.CT_STATES : NftKeywords.CT_STATUSES;
            words.add(l.words() + " " + bits.words(HostOrder.int32(m.mask())));
            return;
        }
        if (v instanceof Masked m && m.xor().isZero() && BitwiseText.isPrefix(m.mask()) && m.of() instanceof Load l
                && l.field() != null && (l.field().type == DataType.IPV4_ADDR || l.field().type == DataType.IPV6_ADDR)) {
            words.add(l.words() + op + l.field().type.render(c.data()) + "/" + prefixLength(m.mask()));
            return;
        }
        if (v instanceof Masked m) {
            // nft writes the operator out after a bitwise value: meta mark & 0x00002000 == 0x00002000.
            words.add(name(m.of()) + BitwiseText.of(m.mask(), m.xor(), b -> text(m.of(), b)) + " " + c.op().symbol + " "
                    + text(m.of(), c.data()));
            return;
        }
        if (v instanceof Prefix p && p.bytes() >= 0 && p.bytes() <= Math.min(c.data().length(), p.field().type.length)) {
            byte[] full = new byte[p.field().type.length];
            System.arraycopy(c.data().raw(), 0, full, 0, p.bytes());
            words.add(p.words() + op + p.field().type.render(Bytes.wrap(full)) + "/" + p.bytes() * 8);
            return;
        }
        words.add(name(v) + op + text(v, c.data()));
    }

    /** The checks nft puts in front of a field by itself, which it would add again when reading the line. */
    private boolean isDependency(Load l, Bytes data, Expr next) {
        if (!(next instanceof Payload p)) {
            return false;
        }
        if (l.field() == Field.META_NFPROTO) {
            return p.base() == Payload.Base.NETWORK && family.mixesNetworkProtocols();
        }
        if (l.field() == Field.META_L4PROTO) {
            int proto = data.get(0);
            return p.base() == Payload.Base.TRANSPORT
                    && (proto == libc_h.IPPROTO_TCP || proto == libc_h.IPPROTO_UDP || proto == libc_h.IPPROTO_SCTP);
        }
        return l.words().equals("meta iiftype") && p.base() == Payload.Base.LINK;
    }

    /** The key a set expression reads from {@code sreg}: every load pending from there on, concatenated. */
    private String key(int sreg) {
        String key;
        if (!pending.isEmpty() && pending.firstKey() == sreg) {
            List<String> parts = new ArrayList<>();
            for (RegisterValue v : pending.values()) {
                parts.add(name(v));
            }
            key = String.join(" . ", parts);
        } else {
            key = name(take(sreg));
        }
        pending.clear();
        return key;
    }

    private void lookup(Lookup l) {
        String key = key(l.sreg());
        if (l.dreg() == null) {
            words.add(key + (l.inverted() ? " != @" : " @") + l.set());
        } else if (l.dreg() == Registers.VERDICT) {
            words.add(key + " vmap @" + l.set());
        } else {
            registers.put(l.dreg(), new MapResult(key, l.set()));
            if (exprs.getLast() == l) {
                // A lookup whose data nothing reads: there for the element's counter, so it is shown.
                words.add(key + " map @" + l.set());
            }
        }
    }

    private String nat(Nat n) {
        String out = n.type().keyword + (family == Family.INET ? " " + n.family().keyword() : "");
        RegisterValue addr = n.addrMin() == 0 ? null : registers.get(n.addrMin());
        if (addr instanceof MapResult m) {
            out += " to " + m.key() + " map @" + m.map();
        } else if (addr instanceof Data d) {
            DataType t = d.bytes().length() == 16 ? DataType.IPV6_ADDR : DataType.IPV4_ADDR;
            String a = t.render(d.bytes());
            out += " to " + (t == DataType.IPV6_ADDR && n.protoMin() != 0 ? "[" + a + "]" : a) + port(n.protoMin());
        } else if (n.protoMin() != 0) {
            out += " to" + port(n.protoMin());
        }
        return out + StatementText.natFlags(n.flags());
    }

    private String to(int portRegister) {
        String p = port(portRegister);
        return p.isEmpty() ? "" : " to " + p;
    }

    private String port(int reg) {
        if (reg == 0) {
            return "";
        }
        RegisterValue v = registers.get(reg);
        if (v instanceof Data d) {
            return ":" + DataType.INET_SERVICE.render(d.bytes());
        }
        return "";
    }

    private static int prefixLength(Bytes mask) {
        int n = 0;
        for (int i = 0; i < mask.length(); i++) {
            n += Integer.bitCount(mask.get(i));
        }
        return n;
    }
}
