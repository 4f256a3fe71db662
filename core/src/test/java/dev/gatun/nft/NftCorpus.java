package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Immediate;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.MetaSet;
import dev.gatun.nft.expr.Registers;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static dev.gatun.nft.DataType.*;

/**
 * For each script under test resources nft-corpus/, the same objects written through gatun's
 * API. The corpus test applies the script with nft in one namespace and this in another, and
 * compares what nft lists for both.
 */
final class NftCorpus {

    static final Map<String, Consumer<Transaction>> BUILDERS = new LinkedHashMap<>();

    static {
        BUILDERS.put("01-design-shape", NftCorpus::designShape);
        BUILDERS.put("02-inet-dual-stack", NftCorpus::inetDualStack);
        BUILDERS.put("03-transport-ports", NftCorpus::transportPorts);
        BUILDERS.put("04-meta", NftCorpus::meta);
        BUILDERS.put("05-conntrack", NftCorpus::conntrack);
        BUILDERS.put("06-verdicts-and-chains", NftCorpus::verdictsAndChains);
        BUILDERS.put("07-nat", NftCorpus::nat);
        BUILDERS.put("08-reject-log-counter", NftCorpus::rejectLogCounter);
        BUILDERS.put("09-verdict-map", NftCorpus::verdictMap);
        BUILDERS.put("10-interval-sets", NftCorpus::intervalSets);
        BUILDERS.put("11-ip6-maps", NftCorpus::ip6Maps);
        BUILDERS.put("12-set-options", NftCorpus::setOptions);
        BUILDERS.put("13-tables", NftCorpus::tables);
        BUILDERS.put("14-fib-ether", NftCorpus::fibEther);
        BUILDERS.put("15-prefixes", NftCorpus::prefixes);
        BUILDERS.put("16-netdev", NftCorpus::netdev);
        BUILDERS.put("17-mark", NftCorpus::mark);
        BUILDERS.put("18-dynset", NftCorpus::dynset);
    }

    private NftCorpus() {}

    private static void designShape(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun").withComment("managed by gatun");
        NftSet ports4 = NftSet.map(t, "ports4", List.of(INET_PROTO, INET_SERVICE), List.of(IPV4_ADDR, INET_SERVICE));
        NftSet hostip4 = NftSet.map(t, "hostip4", List.of(IPV4_ADDR, INET_PROTO, INET_SERVICE),
                List.of(IPV4_ADDR, INET_SERVICE));
        NftSet exposed4 = NftSet.of(t, "exposed4", IPV4_ADDR, INET_PROTO, INET_SERVICE);
        NftSet bridges = NftSet.of(t, "bridges", IFNAME);
        NftSet subnets4 = NftSet.of(t, "subnets4", IPV4_ADDR).withFlags(SetFlag.INTERVAL);
        Chain pre = Chain.base(t, "prerouting", ChainType.NAT, Hook.PREROUTING, Priority.DSTNAT, Verdict.Code.ACCEPT);
        Chain out = Chain.base(t, "output", ChainType.NAT, Hook.OUTPUT, Priority.DSTNAT, Verdict.Code.ACCEPT);
        Chain post = Chain.base(t, "postrouting", ChainType.NAT, Hook.POSTROUTING, Priority.SRCNAT, Verdict.Code.ACCEPT);
        Chain fwd = Chain.base(t, "forward", ChainType.FILTER, Hook.FORWARD, Priority.FILTER, Verdict.Code.ACCEPT);
        tx.add(t).add(ports4).add(hostip4).add(exposed4).add(bridges).add(subnets4)
                .addElements(ports4, List.of(
                        Element.of("tcp", "8080").to("10.88.0.2", "80").withComment("10.88.0.2"),
                        Element.of("udp", "5353").to("10.88.0.3", "53").withComment("10.88.0.3")))
                .addElements(hostip4, List.of(
                        Element.of("192.0.2.10", "tcp", "9000").to("10.88.0.2", "9000").withComment("10.88.0.2")))
                .addElements(exposed4, List.of(Element.of("10.88.0.2", "tcp", "80"), Element.of("10.88.0.3", "udp", "53")))
                .addElements(bridges, List.of(Element.of("gatun0")))
                .addElements(subnets4, List.of(Element.of("10.88.0.0/16")))
                .add(pre).add(out).add(post).add(fwd)
                .add(Rule.in(pre).fibDaddrTypeLocal()
                        .dnatMap(Family.IP, "hostip4", Field.IP_DADDR, Field.META_L4PROTO, Field.TH_DPORT).build())
                .add(Rule.in(pre).fibDaddrTypeLocal().dnatMap(Family.IP, "ports4", Field.META_L4PROTO, Field.TH_DPORT).build())
                .add(Rule.in(out).fibDaddrTypeLocal().dnatMap(Family.IP, "ports4", Field.META_L4PROTO, Field.TH_DPORT).build())
                .add(Rule.in(post).match(Field.IP_SADDR, "127.0.0.0/8").inSet("bridges", Field.META_OIFNAME)
                        .masquerade(false).build())
                .add(Rule.in(post).ctStatus("dnat").inSet("bridges", Field.META_OIFNAME).masquerade(false).build())
                .add(Rule.in(post).inSet("subnets4", Field.IP_SADDR).notInSet("bridges", Field.META_OIFNAME)
                        .masquerade(false).build())
                .add(Rule.in(fwd).ctState("established", "related").accept().build())
                .add(Rule.in(fwd).inSet("exposed4", Field.IP_DADDR, Field.META_L4PROTO, Field.TH_DPORT).accept().build())
                .add(Rule.in(fwd).inSet("bridges", Field.META_IIFNAME).accept().build())
                .add(Rule.in(fwd).inSet("bridges", Field.META_OIFNAME).drop().build());
    }

    private static Chain filterChain(Table t, String name, Hook hook, Verdict.Code policy) {
        return Chain.base(t, name, ChainType.FILTER, hook, Priority.FILTER, policy);
    }

    private static void inetDualStack(Transaction tx) {
        Table t = Table.of(Family.INET, "gatun");
        Chain in = filterChain(t, "input", Hook.INPUT, Verdict.Code.ACCEPT);
        tx.add(t).add(in)
                .add(Rule.in(in).match(Field.IP_SADDR, "10.0.0.0/8").accept().build())
                .add(Rule.in(in).match(Field.IP6_SADDR, "fd00::/64").accept().build())
                .add(Rule.in(in).match(Field.IP6_DADDR, "fd00:1::1").drop().build())
                .add(Rule.in(in).matchNot(Field.IP_DADDR, "192.0.2.1").counter().build())
                .add(Rule.in(in).match(Field.META_NFPROTO, "ipv6").accept().build())
                .add(Rule.in(in).match(Field.IP_PROTOCOL, "udp").accept().build())
                .add(Rule.in(in).match(Field.IP6_NEXTHDR, "tcp").accept().build());
    }

    private static void transportPorts(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        Chain c = filterChain(t, "filter", Hook.INPUT, Verdict.Code.ACCEPT);
        tx.add(t).add(c)
                .add(Rule.in(c).match(Field.TCP_DPORT, "22").accept().build())
                .add(Rule.in(c).match(Field.TCP_SPORT, "1024-65535").accept().build())
                .add(Rule.in(c).matchNot(Field.UDP_DPORT, "53").drop().build())
                .add(Rule.in(c).matchNot(Field.UDP_SPORT, "1000-2000").drop().build())
                .add(Rule.in(c).match(Field.SCTP_DPORT, "9").accept().build())
                .add(Rule.in(c).match(Field.SCTP_SPORT, "5000").drop().build())
                .add(Rule.in(c).match(Field.META_L4PROTO, "tcp").match(Field.TH_DPORT, "8080").accept().build())
                .add(Rule.in(c).match(Field.TCP_DPORT, "80").match(Field.IP_DADDR, "10.1.1.1").accept().build());
    }

    private static void meta(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        Chain c = filterChain(t, "forward", Hook.FORWARD, Verdict.Code.ACCEPT);
        tx.add(t).add(c)
                .add(Rule.in(c).match(Field.META_L4PROTO, "udp").accept().build())
                .add(Rule.in(c).matchNot(Field.META_L4PROTO, "icmp").counter().build())
                .add(Rule.in(c).match(Field.META_IIFNAME, "gatun0").matchNot(Field.META_OIFNAME, "gatun0").accept().build())
                .add(Rule.in(c).match(Field.META_IIFNAME, "veth*").drop().build())
                .add(Rule.in(c).match(Field.META_IIF, "1").accept().build())
                .add(Rule.in(c).match(Field.META_OIF, "1").drop().build())
                .add(Rule.in(c).match(Field.META_MARK, "0x10").accept().build())
                .add(Rule.in(c).matchNot(Field.META_MARK, "0x20").drop().build());
    }

    private static void conntrack(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        Chain c = filterChain(t, "forward", Hook.FORWARD, Verdict.Code.DROP);
        tx.add(t).add(c)
                .add(Rule.in(c).ctState("established", "related").accept().build())
                .add(Rule.in(c).ctState("invalid").drop().build())
                .add(Rule.in(c).ctState("new").counter().accept().build())
                .add(Rule.in(c).ctStatus("dnat").accept().build())
                .add(Rule.in(c).ctStatus("snat", "dnat").counter().build())
                .add(Rule.in(c).match(Field.CT_MARK, "5").accept().build())
                .add(Rule.in(c).match(Field.CT_DIRECTION, "original").counter().build())
                .add(Rule.in(c).match(Field.CT_DIRECTION, "reply").accept().build());
    }

    private static void verdictsAndChains(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        Chain containers = Chain.regular(t, "containers").withComment("per-container rules");
        Chain isolation = Chain.regular(t, "isolation");
        Chain fwd = filterChain(t, "forward", Hook.FORWARD, Verdict.Code.ACCEPT);
        tx.add(t).add(containers).add(isolation).add(fwd)
                .add(Rule.in(containers).match(Field.IP_SADDR, "10.88.0.2").returnFromChain().build())
                .add(Rule.in(containers).match(Field.IP_SADDR, "10.88.0.3").drop().build())
                .add(Rule.in(containers).accept().build())
                .add(Rule.in(isolation).match(Field.META_IIFNAME, "gatun1").match(Field.META_OIFNAME, "gatun2").drop()
                        .comment("no crosstalk").build())
                .add(Rule.in(isolation).returnFromChain().build())
                .add(Rule.in(fwd).match(Field.META_IIFNAME, "gatun0").jump("containers").build())
                .add(Rule.in(fwd).match(Field.META_OIFNAME, "gatun0").goTo("isolation").build())
                .add(Rule.in(fwd).counter().comment("counted").build());
    }

    private static void nat(Transaction tx) {
        Table t = Table.of(Family.INET, "gatun");
        Chain pre = Chain.base(t, "prerouting", ChainType.NAT, Hook.PREROUTING, Priority.DSTNAT, Verdict.Code.ACCEPT);
        Chain post = Chain.base(t, "postrouting", ChainType.NAT, Hook.POSTROUTING, Priority.SRCNAT, Verdict.Code.ACCEPT);
        tx.add(t).add(pre).add(post)
                .add(Rule.in(pre).match(Field.TCP_DPORT, "8080").dnat("10.88.0.2", 80).build())
                .add(Rule.in(pre).match(Field.UDP_DPORT, "5353").dnat("fd00::2", 53).build())
                .add(Rule.in(pre).match(Field.TCP_DPORT, "2222").redirect(22).build())
                .add(Rule.in(pre).match(Field.IP_DADDR, "192.0.2.7").dnat("10.88.0.7").build())
                .add(Rule.in(post).match(Field.IP_SADDR, "10.88.0.0/16").matchNot(Field.META_OIFNAME, "gatun0")
                        .masquerade(true).build())
                .add(Rule.in(post).match(Field.IP6_SADDR, "fd00::/64").masquerade(false).build())
                .add(Rule.in(post).match(Field.IP_SADDR, "10.99.0.0/16").snat("192.0.2.1").build());
    }

    private static void rejectLogCounter(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        Chain in = filterChain(t, "input", Hook.INPUT, Verdict.Code.ACCEPT);
        tx.add(t).add(in)
                .add(Rule.in(in).match(Field.TCP_DPORT, "23").rejectWithTcpReset().build())
                .add(Rule.in(in).match(Field.UDP_DPORT, "69").reject().build())
                .add(Rule.in(in).match(Field.TCP_DPORT, "21").log("ftp: ", 4).drop().build())
                .add(Rule.in(in).match(Field.TCP_DPORT, "25").logGroup(2).drop().build())
                .add(Rule.in(in).counter().log("rest: ").build());
    }

    private static void verdictMap(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        Chain perBridge = Chain.regular(t, "per-bridge");
        NftSet map = NftSet.map(t, "bridge-verdicts", List.of(IFNAME), List.of(VERDICT));
        Chain fwd = filterChain(t, "forward", Hook.FORWARD, Verdict.Code.ACCEPT);
        tx.add(t).add(perBridge).add(map)
                .addElements(map, List.of(Element.of("gatun0").to(Verdict.ACCEPT), Element.of("gatun1").to(Verdict.DROP),
                        Element.of("gatun2").to(Verdict.jump("per-bridge"))))
                .add(fwd)
                .add(Rule.in(perBridge).counter().returnFromChain().build())
                .add(Rule.in(fwd).verdictMap("bridge-verdicts", Field.META_IIFNAME).build())
                .add(Rule.in(fwd).verdictMap("bridge-verdicts", Field.META_OIFNAME).build());
    }

    private static void intervalSets(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        NftSet priv = NftSet.of(t, "private", IPV4_ADDR).withFlags(SetFlag.INTERVAL);
        NftSet ports = NftSet.of(t, "ports", INET_SERVICE).withFlags(SetFlag.INTERVAL);
        Chain fwd = filterChain(t, "forward", Hook.FORWARD, Verdict.Code.ACCEPT);
        tx.add(t).add(priv).add(ports)
                .addElements(priv, List.of(Element.of("10.0.0.0/8"), Element.of("172.16.0.0/12"),
                        Element.of("192.168.0.0/16"), Element.of("198.51.100.7"), Element.of("203.0.113.10-203.0.113.20")))
                .addElements(ports, List.of(Element.of("80"), Element.of("443"), Element.of("8000-8999")))
                .add(fwd)
                .add(Rule.in(fwd).inSet("private", Field.IP_SADDR).inSet("ports", Field.TCP_DPORT).accept().build())
                .add(Rule.in(fwd).notInSet("private", Field.IP_DADDR).drop().build());
    }

    private static void ip6Maps(Transaction tx) {
        Table t = Table.of(Family.IP6, "gatun");
        NftSet ports6 = NftSet.map(t, "ports6", List.of(INET_PROTO, INET_SERVICE), List.of(IPV6_ADDR, INET_SERVICE));
        NftSet hostip6 = NftSet.map(t, "hostip6", List.of(IPV6_ADDR, INET_PROTO, INET_SERVICE),
                List.of(IPV6_ADDR, INET_SERVICE));
        NftSet exposed6 = NftSet.of(t, "exposed6", IPV6_ADDR, INET_PROTO, INET_SERVICE);
        Chain pre = Chain.base(t, "prerouting", ChainType.NAT, Hook.PREROUTING, Priority.DSTNAT, Verdict.Code.ACCEPT);
        Chain fwd = filterChain(t, "forward", Hook.FORWARD, Verdict.Code.DROP);
        tx.add(t).add(ports6).add(hostip6).add(exposed6)
                .addElements(ports6, List.of(Element.of("tcp", "8080").to("fd00::2", "80").withComment("fd00::2")))
                .addElements(hostip6, List.of(Element.of("2001:db8::10", "udp", "53").to("fd00::3", "53")))
                .addElements(exposed6, List.of(Element.of("fd00::2", "tcp", "80")))
                .add(pre).add(fwd)
                .add(Rule.in(pre).fibDaddrTypeLocal()
                        .dnatMap(Family.IP6, "hostip6", Field.IP6_DADDR, Field.META_L4PROTO, Field.TH_DPORT).build())
                .add(Rule.in(pre).fibDaddrTypeLocal().dnatMap(Family.IP6, "ports6", Field.META_L4PROTO, Field.TH_DPORT).build())
                .add(Rule.in(fwd).inSet("exposed6", Field.IP6_DADDR, Field.META_L4PROTO, Field.TH_DPORT).accept().build());
    }

    private static void setOptions(Transaction tx) {
        Table t = Table.of(Family.IP, "gatun");
        NftSet recent = NftSet.of(t, "recent", IPV4_ADDR).withFlags(SetFlag.TIMEOUT)
                .withTimeout(Duration.ofMinutes(5)).withComment("recently seen");
        NftSet fixed = NftSet.of(t, "fixed", INET_SERVICE).withFlags(SetFlag.CONSTANT);
        NftSet learned = NftSet.of(t, "learned", IPV4_ADDR).withFlags(SetFlag.DYNAMIC);
        NftSet marks = NftSet.map(t, "marks", List.of(MARK), List.of(ETHER_ADDR));
        NftSet macs = NftSet.of(t, "macs", ETHER_ADDR);
        Chain in = filterChain(t, "input", Hook.INPUT, Verdict.Code.ACCEPT);
        tx.add(t).add(recent)
                .addElements(recent, List.of(Element.of("192.0.2.1").withTimeout(Duration.ofSeconds(30)),
                        Element.of("192.0.2.2").withComment("pinned")))
                .add(fixed).addElements(fixed, List.of(Element.of("22"), Element.of("80")))
                .add(learned).add(marks).addElements(marks, List.of(Element.of("0x1").to("02:00:00:00:00:01")))
                .add(macs).addElements(macs, List.of(Element.of("02:00:00:00:00:0a")))
                .add(in)
                .add(Rule.in(in).inSet("recent", Field.IP_SADDR).accept().build())
                .add(Rule.in(in).inSet("fixed", Field.TCP_DPORT).accept().build())
                .add(Rule.in(in).inSet("marks", Field.META_MARK).counter().build());
    }

    private static void dynset(Transaction tx) {
        Table t = Table.of(Family.INET, "gatun");
        NftSet heard = NftSet.of(t, "heard", INET_SERVICE).withFlags(SetFlag.DYNAMIC, SetFlag.TIMEOUT)
                .withTimeout(Duration.ofMinutes(5));
        NftSet seen4 = NftSet.of(t, "seen4", IPV4_ADDR, INET_SERVICE).withFlags(SetFlag.DYNAMIC, SetFlag.TIMEOUT)
                .withTimeout(Duration.ofHours(1));
        Chain in = Chain.base(t, "input", ChainType.FILTER, Hook.INPUT, Priority.FILTER + 100, Verdict.Code.ACCEPT);
        Chain raw = Chain.base(t, "raw", ChainType.FILTER, Hook.PREROUTING, Priority.RAW, Verdict.Code.ACCEPT);
        tx.add(t).add(heard).add(seen4).add(in).add(raw)
                .add(Rule.in(in).match(Field.META_L4PROTO, "udp").ctState("new").updateSet("heard", Field.UDP_DPORT).build())
                .add(Rule.in(in).match(Field.IP_SADDR, "10.0.0.0/8")
                        .addToSet("seen4", Duration.ofMinutes(1), Field.IP_SADDR, Field.TCP_DPORT).build())
                .add(Rule.in(raw).matchNot(Field.META_IIFNAME, "lo").match(Field.IP_DADDR, "127.0.0.0/8").drop().build())
                .add(Rule.in(raw).matchNot(Field.META_IIFNAME, "lo").match(Field.IP6_DADDR, "::1").drop().build());
    }

    private static void tables(Transaction tx) {
        Table a = Table.of(Family.IP, "gatun_a").withComment("first");
        Table b = Table.of(Family.IP6, "gatun_b").withFlags(TableFlag.DORMANT);
        Table c = Table.of(Family.INET, "gatun_c");
        Chain bIn = Chain.base(b, "input", ChainType.FILTER, Hook.INPUT, 10, Verdict.Code.DROP);
        Chain cOut = Chain.base(c, "output", ChainType.ROUTE, Hook.OUTPUT, Priority.MANGLE, Verdict.Code.ACCEPT);
        tx.add(a).add(Chain.regular(a, "c").withComment("a chain"))
                .add(b).add(bIn).add(Rule.in(bIn).accept().build())
                .add(c).add(cOut).add(Rule.in(cOut).match(Field.META_MARK, "1").accept().build());
    }

    private static void fibEther(Transaction tx) {
        Table t = Table.of(Family.INET, "gatun");
        Chain pre = Chain.base(t, "prerouting", ChainType.FILTER, Hook.PREROUTING, Priority.RAW, Verdict.Code.ACCEPT);
        tx.add(t).add(pre)
                .add(Rule.in(pre).fibDaddrTypeLocal().counter().build())
                .add(Rule.in(pre).fibDaddrType(CmpOp.NEQ, "local").accept().build())
                .add(Rule.in(pre).fibDaddrOif(1).accept().build())
                .add(Rule.in(pre).match(Field.ETHER_SADDR, "02:00:00:00:00:01").drop().build())
                .add(Rule.in(pre).matchNot(Field.ETHER_DADDR, "02:00:00:00:00:02").accept().build());
    }

    private static void prefixes(Transaction tx) {
        Table t = Table.of(Family.INET, "gatun");
        Chain in = filterChain(t, "input", Hook.INPUT, Verdict.Code.ACCEPT);
        tx.add(t).add(in)
                .add(Rule.in(in).match(Field.IP_SADDR, "10.16.0.0/12").accept().build())
                .add(Rule.in(in).match(Field.IP_DADDR, "10.1.0.0/20").drop().build())
                .add(Rule.in(in).match(Field.IP_SADDR, "192.168.1.0/24").accept().build())
                .add(Rule.in(in).match(Field.IP6_SADDR, "2001:db8::/32").accept().build())
                .add(Rule.in(in).match(Field.IP6_DADDR, "fd00:0:0:100::/56").drop().build())
                .add(Rule.in(in).match(Field.IP6_SADDR, "fd00:a0::/28").accept().build());
    }

    private static void netdev(Transaction tx) {
        Table t = Table.of(Family.NETDEV, "gatun");
        Chain ingress = new Chain(Family.NETDEV, "gatun", "ingress",
                new Chain.Base(ChainType.FILTER, Hook.INGRESS, 0, Verdict.Code.ACCEPT, "lo"), null, 0);
        tx.add(t).add(ingress).add(Rule.in(ingress).counter().build());
    }

    private static void mark(Transaction tx) {
        Table gatun = Table.of(Family.IP, "gatun");
        Chain fwd = filterChain(gatun, "forward", Hook.FORWARD, Verdict.Code.ACCEPT);
        Table filter = Table.of(Family.INET, "filter");
        Chain other = filterChain(filter, "forward", Hook.FORWARD, Verdict.Code.DROP);
        tx.add(gatun).add(fwd)
                .add(Rule.in(fwd).match(Field.META_OIFNAME, "br0").setMarkBits(0x00002000).accept().build())
                .add(Rule.in(fwd).raw(markSet(0xffff0000, 0)).build())
                .add(Rule.in(fwd).raw(markSet(0xffffffff, 0x10)).build())
                .add(Rule.in(fwd).raw(markSet(0xffff0000, 0x3)).build())
                .add(Rule.in(fwd).raw(new Immediate(Registers.REG1, HostOrder.int32(5)),
                        new MetaSet(Meta.Key.MARK, Registers.REG1)).build())
                .add(Rule.in(fwd).raw(new Ct(Ct.Key.MARK, null, Registers.REG1),
                        new MetaSet(Meta.Key.MARK, Registers.REG1)).build())
                .add(filter).add(other)
                .add(Rule.in(other).matchMarkBits(0x00002000).accept().build())
                .add(Rule.in(other).raw(new Meta(Meta.Key.MARK, Registers.REG1),
                        new Bitwise(Registers.REG1, Registers.REG1, HostOrder.int32(0xff00), Bytes.zeros(4), true),
                        new Cmp(Registers.REG1, CmpOp.NEQ, HostOrder.int32(0x100))).drop().build());
    }

    /** meta mark set (meta mark & mask) ^ xor, as nft writes it. */
    private static Expr[] markSet(int mask, int xor) {
        return new Expr[] {new Meta(Meta.Key.MARK, Registers.REG1),
                new Bitwise(Registers.REG1, Registers.REG1, HostOrder.int32(mask), HostOrder.int32(xor), true),
                new MetaSet(Meta.Key.MARK, Registers.REG1)};
    }
}
