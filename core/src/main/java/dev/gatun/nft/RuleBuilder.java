package dev.gatun.nft;

import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
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
import dev.gatun.nft.expr.NatFlag;
import dev.gatun.nft.expr.Redirect;
import dev.gatun.nft.expr.Registers;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Writes a rule the way it reads in nft, producing the expressions nft produces for the same
 * line, protocol dependencies included:
 *
 * <pre>{@code
 * Rule.in(forward).match(Field.IP_DADDR, "10.0.0.1").match(Field.TCP_DPORT, "80").counter().accept().build()
 *   // ip daddr 10.0.0.1 tcp dport 80 counter accept
 * Rule.in(prerouting).fibDaddrTypeLocal().dnatMap(Family.IP, "ports4", Field.META_L4PROTO, Field.TH_DPORT).build()
 *   // fib daddr type local dnat ip to meta l4proto . th dport map @ports4
 * }</pre>
 *
 * <p>The protocol checks come from {@link ProtocolContext}, matches are lowered by
 * {@link MatchLowering}, and words such as ct states are read from {@link NftKeywords}, the
 * tables {@link RuleRenderer} writes them back with.
 */
public final class RuleBuilder {

    private final Family family;
    private final String table;
    private final String chain;
    private final List<Expr> exprs = new ArrayList<>();
    private final ProtocolContext context;
    private final MatchLowering matches;
    private String comment;

    RuleBuilder(Family family, String table, String chain) {
        this.family = family;
        this.table = table;
        this.chain = chain;
        this.context = new ProtocolContext(family, exprs);
        this.matches = new MatchLowering(exprs, context);
    }

    // ------------------------------------------------------------------ matches

    /** {@code FIELD VALUE}: equality, a prefix ("10.0.0.0/8"), a range ("8000-8010") or an interface wildcard ("br-*"). */
    public RuleBuilder match(Field field, String value) {
        matches.compare(field, CmpOp.EQ, value);
        return this;
    }

    /** {@code FIELD != VALUE}. */
    public RuleBuilder matchNot(Field field, String value) {
        matches.compare(field, CmpOp.NEQ, value);
        return this;
    }

    /** {@code FIELD . FIELD ... @set}: the fields, concatenated, are in the set. */
    public RuleBuilder inSet(String set, Field... key) {
        matches.loadConcatenation(key);
        exprs.add(new Lookup(Registers.REG1, NftNames.check("set", set), null, false));
        return this;
    }

    /** {@code FIELD . FIELD ... != @set}. */
    public RuleBuilder notInSet(String set, Field... key) {
        matches.loadConcatenation(key);
        exprs.add(new Lookup(Registers.REG1, NftNames.check("set", set), null, true));
        return this;
    }

    /** {@code FIELD . FIELD ... vmap @map}: the verdict is the map's data for the key. */
    public RuleBuilder verdictMap(String map, Field... key) {
        matches.loadConcatenation(key);
        exprs.add(new Lookup(Registers.REG1, NftNames.check("map", map), Registers.VERDICT, false));
        return this;
    }

    /**
     * {@code FIELD . FIELD ... map @map}, its data loaded and left unread: only for what the
     * lookup does by itself, updating the counter an element of the map carries.
     */
    public RuleBuilder touchMap(String map, Field... key) {
        matches.loadConcatenation(key);
        exprs.add(new Lookup(Registers.REG1, NftNames.check("map", map), Registers.REG1, false));
        return this;
    }

    /**
     * {@code update @set { FIELD . FIELD ... }}: adds the key to the set from the packet path, or
     * refreshes its timeout when it is there (the set's default timeout; the set must be dynamic).
     */
    public RuleBuilder updateSet(String set, Field... key) {
        matches.loadConcatenation(key);
        exprs.add(new Dynset(Dynset.Op.UPDATE, Registers.REG1, NftNames.check("set", set), null));
        return this;
    }

    /** {@code add @set { FIELD . FIELD ... timeout DURATION }}: adds the key once, with a timeout of its own (null: the set's). */
    public RuleBuilder addToSet(String set, Duration timeout, Field... key) {
        matches.loadConcatenation(key);
        exprs.add(new Dynset(Dynset.Op.ADD, Registers.REG1, NftNames.check("set", set), timeout));
        return this;
    }

    /** {@code ct state established,related}. */
    public RuleBuilder ctState(String... states) {
        return ctBits(Ct.Key.STATE, NftKeywords.CT_STATES.bits(states));
    }

    /** {@code ct status dnat}. */
    public RuleBuilder ctStatus(String... statuses) {
        return ctBits(Ct.Key.STATUS, NftKeywords.CT_STATUSES.bits(statuses));
    }

    /** {@code meta mark & BITS == BITS}: all of these mark bits are set, as {@link #setMarkBits} leaves them. */
    public RuleBuilder matchMarkBits(int bits) {
        requireMarkBits(bits);
        exprs.add(new Meta(Meta.Key.MARK, Registers.REG1));
        exprs.add(new Bitwise(Registers.REG1, Registers.REG1, HostOrder.int32(bits), Bytes.zeros(4), true));
        exprs.add(new Cmp(Registers.REG1, CmpOp.EQ, HostOrder.int32(bits)));
        return this;
    }

    /** {@code fib daddr type local}: the destination is an address of this host. */
    public RuleBuilder fibDaddrTypeLocal() {
        return fibDaddrType(CmpOp.EQ, "local");
    }

    /** {@code fib daddr type TYPE} or {@code fib daddr type != TYPE} (local, unicast, broadcast, multicast, ...). */
    public RuleBuilder fibDaddrType(CmpOp op, String type) {
        if (op != CmpOp.EQ && op != CmpOp.NEQ) {
            throw new InvalidInputException("fib daddr type compares with == or !=, not " + op.symbol);
        }
        exprs.add(new Fib(kernel_h.NFTA_FIB_F_DADDR, kernel_h.NFT_FIB_RESULT_ADDRTYPE, Registers.REG1));
        exprs.add(new Cmp(Registers.REG1, op, HostOrder.int32(NftKeywords.ADDRESS_TYPES.value(type))));
        return this;
    }

    /** {@code fib daddr oif INDEX}: the route to the destination leaves through interface INDEX. */
    public RuleBuilder fibDaddrOif(int interfaceIndex) {
        exprs.add(new Fib(kernel_h.NFTA_FIB_F_DADDR, kernel_h.NFT_FIB_RESULT_OIF, Registers.REG1));
        exprs.add(new Cmp(Registers.REG1, CmpOp.EQ, HostOrder.int32(interfaceIndex)));
        return this;
    }

    // ------------------------------------------------------------------ statements

    public RuleBuilder counter() {
        exprs.add(new Counter(0, 0));
        return this;
    }

    /** {@code meta mark set meta mark | BITS}: sets these mark bits and keeps the others. */
    public RuleBuilder setMarkBits(int bits) {
        requireMarkBits(bits);
        exprs.add(new Meta(Meta.Key.MARK, Registers.REG1));
        exprs.add(new Bitwise(Registers.REG1, Registers.REG1, HostOrder.int32(~bits), HostOrder.int32(bits), true));
        exprs.add(new MetaSet(Meta.Key.MARK, Registers.REG1));
        return this;
    }

    /** {@code log prefix "..."}. */
    public RuleBuilder log(String prefix) {
        exprs.add(new Log(checkLogPrefix(prefix), null, null));
        return this;
    }

    /** {@code log prefix "..." level LEVEL} with a syslog level 0-7. */
    public RuleBuilder log(String prefix, int level) {
        if (level < 0 || level > 7) {
            throw new InvalidInputException("log level " + level + " is out of range 0-7");
        }
        exprs.add(new Log(prefix == null ? null : checkLogPrefix(prefix), level, null));
        return this;
    }

    /** {@code log group N}: to nflog group N. */
    public RuleBuilder logGroup(int group) {
        if (group < 0 || group > 65535) {
            throw new InvalidInputException("log group " + group + " is out of range 0-65535");
        }
        exprs.add(new Log(null, null, group));
        return this;
    }

    /** {@code masquerade}, with {@code fully-random} when asked. */
    public RuleBuilder masquerade(boolean fullyRandom) {
        exprs.add(new Masquerade(fullyRandom ? Set.of(NatFlag.PROTO_RANDOM_FULLY) : NatFlag.none(), 0, 0));
        return this;
    }

    /** {@code snat ip to ADDRESS} (or ip6 by the address's family). */
    public RuleBuilder snat(String address) {
        return natTo(Nat.Type.SNAT, address, null);
    }

    /** {@code dnat ip to ADDRESS}. */
    public RuleBuilder dnat(String address) {
        return natTo(Nat.Type.DNAT, address, null);
    }

    /** {@code dnat ip to ADDRESS:PORT}: needs a transport protocol match before it. */
    public RuleBuilder dnat(String address, int port) {
        return natTo(Nat.Type.DNAT, address, port);
    }

    /**
     * {@code dnat ip to KEY . KEY map @map}: the map's data (an address, or an address and a
     * port) comes from looking the concatenated key up.
     */
    public RuleBuilder dnatMap(Family addressFamily, String map, Field... key) {
        if (addressFamily != Family.IP && addressFamily != Family.IP6) {
            throw new InvalidInputException("dnat maps to ip or ip6 addresses, not " + addressFamily);
        }
        matches.loadConcatenation(key);
        exprs.add(new Lookup(Registers.REG1, NftNames.check("map", map), Registers.REG1, false));
        int addressWords = (addressFamily == Family.IP ? DataType.IPV4_ADDR : DataType.IPV6_ADDR).length
                / Registers.BYTES_32;
        exprs.add(new Nat(Nat.Type.DNAT, addressFamily, Registers.REG1, 0, Registers.after(addressWords), 0, NatFlag.none()));
        return this;
    }

    /** {@code redirect to :PORT}: needs a transport protocol match before it. */
    public RuleBuilder redirect(int port) {
        context.requireTransport("redirect to a port");
        exprs.add(new Immediate(Registers.REG1, port(port)));
        exprs.add(new Redirect(Registers.REG1, 0, Set.of(NatFlag.PROTO_SPECIFIED)));
        return this;
    }

    /** {@code reject}: an ICMP port-unreachable of the packet's family. */
    public RuleBuilder reject() {
        switch (family) {
            case IP -> exprs.add(new Reject(kernel_h.NFT_REJECT_ICMP_UNREACH, kernel_h.ICMP_PORT_UNREACH));
            case IP6 -> exprs.add(new Reject(kernel_h.NFT_REJECT_ICMP_UNREACH, kernel_h.ICMPV6_PORT_UNREACH));
            default -> exprs.add(new Reject(kernel_h.NFT_REJECT_ICMPX_UNREACH, kernel_h.NFT_REJECT_ICMPX_PORT_UNREACH));
        }
        return this;
    }

    /** {@code reject with tcp reset}. */
    public RuleBuilder rejectWithTcpReset() {
        if (!context.transportIs(libc_h.IPPROTO_TCP)) {
            throw new InvalidInputException("reject with tcp reset needs a tcp match before it");
        }
        exprs.add(new Reject(kernel_h.NFT_REJECT_TCP_RST, 0));
        return this;
    }

    public RuleBuilder accept() {
        return verdict(Verdict.ACCEPT);
    }

    public RuleBuilder drop() {
        return verdict(Verdict.DROP);
    }

    public RuleBuilder returnFromChain() {
        return verdict(Verdict.RETURN);
    }

    public RuleBuilder jump(String chain) {
        return verdict(Verdict.jump(chain));
    }

    public RuleBuilder goTo(String chain) {
        return verdict(Verdict.goTo(chain));
    }

    public RuleBuilder verdict(Verdict verdict) {
        exprs.add(new VerdictExpr(verdict));
        return this;
    }

    /** Appends expressions as they are, for what the builder has no words for. */
    public RuleBuilder raw(Expr... expressions) {
        exprs.addAll(Arrays.asList(expressions));
        return this;
    }

    public RuleBuilder comment(String comment) {
        this.comment = comment;
        return this;
    }

    public Rule build() {
        return new Rule(family, table, chain, exprs, comment, 0);
    }

    // ------------------------------------------------------------------ helpers

    private RuleBuilder ctBits(Ct.Key key, int mask) {
        exprs.add(new Ct(key, null, Registers.REG1));
        exprs.add(new Bitwise(Registers.REG1, Registers.REG1, HostOrder.int32(mask), Bytes.zeros(4)));
        exprs.add(new Cmp(Registers.REG1, CmpOp.NEQ, Bytes.zeros(4)));
        return this;
    }

    private RuleBuilder natTo(Nat.Type type, String address, Integer port) {
        boolean v6 = address.contains(":");
        Family addressFamily = v6 ? Family.IP6 : Family.IP;
        Bytes addr = (v6 ? DataType.IPV6_ADDR : DataType.IPV4_ADDR).encode(address);
        exprs.add(new Immediate(Registers.REG1, addr));
        int protoReg = 0;
        Set<NatFlag> flags = NatFlag.none();
        if (port != null) {
            context.requireTransport(type.keyword + " to a port");
            exprs.add(new Immediate(Registers.REG2, port(port)));
            protoReg = Registers.REG2;
            flags = Set.of(NatFlag.PROTO_SPECIFIED);
        }
        exprs.add(new Nat(type, addressFamily, Registers.REG1, 0, protoReg, 0, flags));
        return this;
    }

    private static void requireMarkBits(int bits) {
        if (bits == 0) {
            throw new InvalidInputException("mark bits must name at least one bit, not 0x00000000");
        }
    }

    private static Bytes port(int port) {
        if (port < 1 || port > 65535) {
            throw new InvalidInputException("port " + port + " is out of range 1-65535");
        }
        return Bytes.of((byte) (port >> 8), (byte) port);
    }

    private static String checkLogPrefix(String prefix) {
        if (prefix.length() > kernel_h.NF_LOG_PREFIXLEN - 1 || prefix.contains("\"")) {
            throw new InvalidInputException("log prefix '" + prefix + "' must be at most "
                    + (kernel_h.NF_LOG_PREFIXLEN - 1) + " characters without double quotes");
        }
        return prefix;
    }
}
