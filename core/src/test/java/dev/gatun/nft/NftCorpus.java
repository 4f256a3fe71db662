package dev.gatun.nft;

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
}
