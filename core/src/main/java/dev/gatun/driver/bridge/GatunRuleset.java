package dev.gatun.driver.bridge;

import dev.gatun.driver.foreign.AcceptMark;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.nft.Chain;
import dev.gatun.nft.ChainType;
import dev.gatun.nft.DataType;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Field;
import dev.gatun.nft.Hook;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.NftRenderer;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Priority;
import dev.gatun.nft.Rule;
import dev.gatun.nft.RuleBuilder;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.SetFlag;
import dev.gatun.nft.Table;
import dev.gatun.nft.Transaction;
import dev.gatun.nft.value.Verdict;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static dev.gatun.nft.DataType.INET_PROTO;
import static dev.gatun.nft.DataType.INET_SERVICE;
import static dev.gatun.nft.DataType.IPV4_ADDR;
import static dev.gatun.nft.DataType.IPV6_ADDR;

/**
 * gatun's own table, {@code inet gatun}. Its rules are static: publishing a port or adding a
 * network only adds elements to the sets and maps below, so the cost of a change does not grow
 * with how many there are (the kernel rebuilds a chain's rules on every commit that touches it).
 *
 * <pre>
 * ports4/6   proto . port            : container addr . port    published on every host address
 * hostip4/6  host addr . proto . port : container addr . port    published on one host address
 * bridges    ifname of every gatun bridge;  internal: bridges of internal networks
 * samebridge ifname . ifname of every gatun bridge with itself: traffic between two different
 *            bridges is dropped unless it is to a published port (networks are isolated)
 * subnets4/6 every network's subnet;  masq4/6: subnets whose outbound traffic is masqueraded
 * outside4/6 host ifname . container addr of every container outside gatun's networks that
 *            mappings go to (a CNI chain's, after bridge or ptp): its localhost and hairpin
 *            connections are masqueraded as those into gatun's bridges are
 * counted    bridges of networks made with counters: their mappings' elements carry one
 * udpheard   UDP ports that datagrams no mapping translated were sent to lately (see below)
 * </pre>
 * Chain prerouting-raw drops what comes to 127.0.0.0/8 or ::1 on any interface but lo, before
 * connection tracking and the dnat chains see it: route_localnet, which gatun turns on for its
 * bridges and for the host end of containers outside its networks so that 127.0.0.1 can be
 * published, would otherwise let a container reach the host's loopback-only services
 * (CVE-2020-8558), and a dnat would let a frame to 127.0.0.1 from the LAN reach a port published
 * on 127.0.0.1 only, before the kernel's martian check ever saw it.
 * <p>Chain input records in udpheard the destination port of every UDP packet that reaches the
 * host itself while its conntrack entry has seen no reply: a client that began sending to a port
 * before it was published (its entry is not translated, and each datagram keeps it alive). A UDP
 * publish asks udpheard about its ports, and deletes such entries only for a port found there, so
 * that a publish walks the host's conntrack table only when a client may be waiting. The set
 * forgets a port {@link #UDP_HEARD_FOR} after its last packet, longer than the kernel keeps an
 * unanswered UDP entry ({@code nf_conntrack_udp_timeout}, 30 s by default). Whoever makes the
 * table fills the set once from the conntrack table (see {@link UdpHeard#seed}): entries made
 * before the table existed were never seen by its rule.
 * A mapping's counter counts the packets sent to it: the dnat lookup finds its element for a
 * connection's first packet (nat chains see no other), and chain count looks it up again, by
 * the connection's original destination, for each later packet in that direction as it leaves
 * for the container (chain postrouting-filter: forwarded or sent by a host process, whose
 * output hook still names the interface of the address before dnat). Replies are not counted.
 * The forward chain runs before other tables' and marks what it accepts (see {@link AcceptMark}).
 */
final class GatunRuleset {

    static final Table TABLE = Table.of(Family.INET, "gatun").withComment("managed by gatun");

    static final NftSet PORTS4 = NftSet.map(TABLE, "ports4", List.of(INET_PROTO, INET_SERVICE), List.of(IPV4_ADDR, INET_SERVICE));
    static final NftSet HOSTIP4 = NftSet.map(TABLE, "hostip4", List.of(IPV4_ADDR, INET_PROTO, INET_SERVICE),
            List.of(IPV4_ADDR, INET_SERVICE));
    static final NftSet PORTS6 = NftSet.map(TABLE, "ports6", List.of(INET_PROTO, INET_SERVICE), List.of(IPV6_ADDR, INET_SERVICE));
    static final NftSet HOSTIP6 = NftSet.map(TABLE, "hostip6", List.of(IPV6_ADDR, INET_PROTO, INET_SERVICE),
            List.of(IPV6_ADDR, INET_SERVICE));
    static final NftSet BRIDGES = NftSet.of(TABLE, "bridges", DataType.IFNAME);
    static final NftSet INTERNAL = NftSet.of(TABLE, "internal", DataType.IFNAME);
    static final NftSet SAMEBRIDGE = NftSet.of(TABLE, "samebridge", DataType.IFNAME, DataType.IFNAME);
    static final NftSet SUBNETS4 = NftSet.of(TABLE, "subnets4", IPV4_ADDR).withFlags(SetFlag.INTERVAL);
    static final NftSet SUBNETS6 = NftSet.of(TABLE, "subnets6", IPV6_ADDR).withFlags(SetFlag.INTERVAL);
    static final NftSet MASQ4 = NftSet.of(TABLE, "masq4", IPV4_ADDR).withFlags(SetFlag.INTERVAL);
    static final NftSet MASQ6 = NftSet.of(TABLE, "masq6", IPV6_ADDR).withFlags(SetFlag.INTERVAL);

    static final NftSet OUTSIDE4 = NftSet.of(TABLE, "outside4", DataType.IFNAME, IPV4_ADDR);
    static final NftSet OUTSIDE6 = NftSet.of(TABLE, "outside6", DataType.IFNAME, IPV6_ADDR);
    static final NftSet COUNTED = NftSet.of(TABLE, "counted", DataType.IFNAME);
    /** How long udpheard keeps a port after its last unanswered datagram. */
    static final Duration UDP_HEARD_FOR = Duration.ofMinutes(5);
    static final NftSet UDPHEARD = NftSet.of(TABLE, "udpheard", INET_SERVICE).withFlags(SetFlag.DYNAMIC, SetFlag.TIMEOUT)
            .withTimeout(UDP_HEARD_FOR);

    static final List<NftSet> SETS = List.of(PORTS4, HOSTIP4, PORTS6, HOSTIP6, BRIDGES, INTERNAL, SAMEBRIDGE, SUBNETS4,
            SUBNETS6, MASQ4, MASQ6, OUTSIDE4, OUTSIDE6, COUNTED, UDPHEARD);

    private static final Chain PREROUTING = Chain.base(TABLE, "prerouting", ChainType.NAT, Hook.PREROUTING, Priority.DSTNAT,
            Verdict.Code.ACCEPT);
    private static final Chain OUTPUT = Chain.base(TABLE, "output", ChainType.NAT, Hook.OUTPUT, Priority.DSTNAT,
            Verdict.Code.ACCEPT);
    private static final Chain POSTROUTING = Chain.base(TABLE, "postrouting", ChainType.NAT, Hook.POSTROUTING,
            Priority.SRCNAT, Verdict.Code.ACCEPT);
    /**
     * Before other tables' forward chains (filter, 0; firewalld's, 10), so that the mark gatun
     * sets on what it accepts is there when they look (see {@link AcceptMark}).
     */
    static final int FORWARD_PRIORITY = Priority.FILTER - 100;
    /** The mark bits every accept in the forward chain sets. */
    static final int MARK = AcceptMark.bits();
    // "fwd" is an nft keyword; the chain is called forward.
    private static final Chain FORWARD = Chain.base(TABLE, "forward", ChainType.FILTER, Hook.FORWARD, FORWARD_PRIORITY,
            Verdict.Code.ACCEPT);
    /** Where packets to published ports after the first are counted, with the interface they leave by. */
    private static final Chain POSTROUTING_FILTER = Chain.base(TABLE, "postrouting-filter", ChainType.FILTER,
            Hook.POSTROUTING, Priority.FILTER, Verdict.Code.ACCEPT);
    private static final Chain COUNT = Chain.regular(TABLE, "count");
    /** Before connection tracking (raw), where 127.0.0.0/8 from elsewhere than lo is dropped. */
    private static final Chain PREROUTING_RAW = Chain.base(TABLE, "prerouting-raw", ChainType.FILTER, Hook.PREROUTING,
            Priority.RAW, Verdict.Code.ACCEPT);
    /** After other tables' input filters (ufw's, firewalld's): what they drop made no conntrack entry to record. */
    private static final Chain INPUT = Chain.base(TABLE, "input", ChainType.FILTER, Hook.INPUT, Priority.FILTER + 100,
            Verdict.Code.ACCEPT);
    static final List<Chain> CHAINS = List.of(PREROUTING, OUTPUT, POSTROUTING, FORWARD, POSTROUTING_FILTER, COUNT,
            PREROUTING_RAW, INPUT);
    /** The rules where chain count looks elements up by key alone (Linux 6.6 on; 6.1 refuses a map so looked up). */
    private static final List<Rule> KEY_ONLY_RULES = rules(true);
    /** The same where it loads their data too, which nft cannot write: for kernels that refuse the others. */
    private static final List<Rule> DATA_LOADING_RULES = rules(false);
    /** Each rule of both shapes in nft's words, to compare the rules read back with. */
    private static final Map<Rule, String> RENDERED = rendered();
    /** The shape this kernel takes; learned when it refuses the key-only lookups or a table of the other shape is read. */
    private static volatile boolean keyOnlyLookups = true;

    private GatunRuleset() {}

    /** The table's rules, in the shape this kernel takes. */
    static List<Rule> rules() {
        return keyOnlyLookups ? KEY_ONLY_RULES : DATA_LOADING_RULES;
    }

    /**
     * Whether {@code e}, from a commit that made the table's rules, is this kernel refusing
     * chain count's key-only lookups (EINVAL); then the rules load the data instead from now on,
     * and the caller builds the table again.
     */
    static boolean fellBackFrom(NetlinkException e) {
        if (keyOnlyLookups && e.isInvalidArgument() && e.operation().equals("add " + KEY_ONLY_RULES.stream()
                .filter(r -> r.chain().equals(COUNT.name())).findFirst().orElseThrow().describe())) {
            keyOnlyLookups = false;
            return true;
        }
        return false;
    }

    /** For tests: the shape used from now on ({@code true}: key-only lookups, the default). */
    static void useKeyOnlyLookups(boolean keyOnly) {
        keyOnlyLookups = keyOnly;
    }

    private static List<Rule> rules(boolean keyOnly) {
        List<Rule> rules = new ArrayList<>();
        for (Chain dnat : List.of(PREROUTING, OUTPUT)) {
            rules.add(Rule.in(dnat).fibDaddrTypeLocal()
                    .dnatMap(Family.IP, HOSTIP4.name(), Field.IP_DADDR, Field.META_L4PROTO, Field.TH_DPORT).build());
            rules.add(Rule.in(dnat).match(Field.META_NFPROTO, "ipv4").fibDaddrTypeLocal()
                    .dnatMap(Family.IP, PORTS4.name(), Field.META_L4PROTO, Field.TH_DPORT).build());
            rules.add(Rule.in(dnat).fibDaddrTypeLocal()
                    .dnatMap(Family.IP6, HOSTIP6.name(), Field.IP6_DADDR, Field.META_L4PROTO, Field.TH_DPORT).build());
            rules.add(Rule.in(dnat).match(Field.META_NFPROTO, "ipv6").fibDaddrTypeLocal()
                    .dnatMap(Family.IP6, PORTS6.name(), Field.META_L4PROTO, Field.TH_DPORT).build());
        }
        // A host process reaching 127.0.0.1:port: the source must change, or the reply stays in the container.
        rules.add(Rule.in(POSTROUTING).match(Field.IP_SADDR, "127.0.0.0/8").inSet(BRIDGES.name(), Field.META_OIFNAME)
                .masquerade(false).comment("localhost to a published port").build());
        // Hairpin: a container reaching a published port of itself or a sibling through a host address.
        rules.add(Rule.in(POSTROUTING).ctStatus("dnat").inSet(SUBNETS4.name(), Field.IP_SADDR)
                .inSet(BRIDGES.name(), Field.META_OIFNAME).masquerade(false).comment("hairpin").build());
        rules.add(Rule.in(POSTROUTING).ctStatus("dnat").inSet(SUBNETS6.name(), Field.IP6_SADDR)
                .inSet(BRIDGES.name(), Field.META_OIFNAME).masquerade(false).comment("hairpin").build());
        // The same for containers outside gatun's networks. A routed hairpin connection comes in by
        // the interface it goes out by (the other plugin's bridge, or for ptp the container's own
        // veth: a sibling's replies are routed back through the host there and need no rewrite).
        // One that br_netfilter bridges back has no input interface here: a container reaching
        // itself is told by its source (a sibling's replies cross the same bridge hooks).
        rules.add(Rule.in(POSTROUTING).match(Field.IP_SADDR, "127.0.0.0/8").ctStatus("dnat")
                .inSet(OUTSIDE4.name(), Field.META_OIFNAME, Field.IP_DADDR).masquerade(false)
                .comment("localhost to a published port outside gatun's networks").build());
        for (Field[] addresses : List.of(new Field[] {Field.IP_SADDR, Field.IP_DADDR},
                new Field[] {Field.IP6_SADDR, Field.IP6_DADDR})) {
            String set = (addresses[0] == Field.IP_SADDR ? OUTSIDE4 : OUTSIDE6).name();
            rules.add(Rule.in(POSTROUTING).ctStatus("dnat").inSet(set, Field.META_IIFNAME, addresses[1])
                    .masquerade(false).comment("hairpin outside gatun's networks").build());
            rules.add(Rule.in(POSTROUTING).ctStatus("dnat").inSet(set, Field.META_OIFNAME, addresses[0])
                    .inSet(set, Field.META_OIFNAME, addresses[1]).masquerade(false)
                    .comment("bridged hairpin outside gatun's networks").build());
        }
        rules.add(Rule.in(POSTROUTING).inSet(MASQ4.name(), Field.IP_SADDR).notInSet(BRIDGES.name(), Field.META_OIFNAME)
                .masquerade(false).comment("outbound").build());
        rules.add(Rule.in(POSTROUTING).inSet(MASQ6.name(), Field.IP6_SADDR).notInSet(BRIDGES.name(), Field.META_OIFNAME)
                .masquerade(false).comment("outbound").build());
        // Later packets of connections to a counted network's published ports (the first was
        // counted by its dnat lookup, before its connection was confirmed).
        rules.add(Rule.in(POSTROUTING_FILTER).match(Field.CT_DIRECTION, "original").ctStatus("dnat").ctStatus("confirmed")
                .inSet(COUNTED.name(), Field.META_OIFNAME).jump(COUNT.name()).build());
        // One rule per protocol: nft reads "ct original proto-dst" in a key only after a protocol match.
        for (String family : List.of("ipv4", "ipv6")) {
            boolean v4 = family.equals("ipv4");
            for (String protocol : List.of("tcp", "udp", "sctp")) {
                rules.add(count(keyOnly, Rule.in(COUNT).match(Field.META_NFPROTO, family).match(Field.META_L4PROTO, protocol),
                        v4 ? HOSTIP4 : HOSTIP6, v4 ? Field.CT_ORIGINAL_IP_DADDR : Field.CT_ORIGINAL_IP6_DADDR,
                        Field.META_L4PROTO, Field.CT_ORIGINAL_PROTO_DST));
                rules.add(count(keyOnly, Rule.in(COUNT).match(Field.META_NFPROTO, family).match(Field.META_L4PROTO, protocol),
                        v4 ? PORTS4 : PORTS6, Field.META_L4PROTO, Field.CT_ORIGINAL_PROTO_DST));
            }
        }
        rules.add(Rule.in(PREROUTING_RAW).matchNot(Field.META_IIFNAME, "lo").match(Field.IP_DADDR, "127.0.0.0/8").drop()
                .comment("loopback addresses come from lo only").build());
        rules.add(Rule.in(PREROUTING_RAW).matchNot(Field.META_IIFNAME, "lo").match(Field.IP6_DADDR, "::1").drop()
                .comment("loopback addresses come from lo only").build());
        rules.add(Rule.in(INPUT).match(Field.META_L4PROTO, "udp").ctState("new").updateSet(UDPHEARD.name(), Field.UDP_DPORT)
                .comment("UDP that reached the host itself: a publish of its port clears such flows").build());
        rules.add(Rule.in(FORWARD).inSet(INTERNAL.name(), Field.META_IIFNAME).notInSet(INTERNAL.name(), Field.META_OIFNAME)
                .drop().comment("internal networks have no way out").build());
        rules.add(Rule.in(FORWARD).notInSet(INTERNAL.name(), Field.META_IIFNAME).inSet(INTERNAL.name(), Field.META_OIFNAME)
                .drop().comment("nor a way in").build());
        // Every accept marks the packet, so that another table's forward chain, which runs after
        // this one and which gatun never edits, can let gatun's traffic through with one rule.
        rules.add(Rule.in(FORWARD).ctState("established", "related").inSet(BRIDGES.name(), Field.META_OIFNAME)
                .setMarkBits(MARK).accept().build());
        rules.add(Rule.in(FORWARD).ctState("established", "related").inSet(BRIDGES.name(), Field.META_IIFNAME)
                .setMarkBits(MARK).accept().build());
        // Only the published-port maps translate destinations into a bridge.
        rules.add(Rule.in(FORWARD).ctStatus("dnat").inSet(BRIDGES.name(), Field.META_OIFNAME).setMarkBits(MARK).accept()
                .comment("published ports").build());
        rules.add(Rule.in(FORWARD).inSet(BRIDGES.name(), Field.META_IIFNAME).inSet(BRIDGES.name(), Field.META_OIFNAME)
                .notInSet(SAMEBRIDGE.name(), Field.META_IIFNAME, Field.META_OIFNAME).drop()
                .comment("networks are isolated from each other").build());
        rules.add(Rule.in(FORWARD).inSet(BRIDGES.name(), Field.META_IIFNAME).setMarkBits(MARK).accept().build());
        rules.add(Rule.in(FORWARD).inSet(BRIDGES.name(), Field.META_OIFNAME).drop()
                .comment("unpublished ports and routes straight to containers").build());
        return List.copyOf(rules);
    }

    /** A lookup of {@code map} for the counter its element carries, by key only or loading the data nothing reads. */
    private static Rule count(boolean keyOnly, RuleBuilder rule, NftSet map, Field... key) {
        if (keyOnly) {
            return rule.inSet(map.name(), key).build();
        }
        // nft prints a lookup whose data nothing reads as nothing: the comment says what is there.
        return rule.touchMap(map.name(), key).comment("looks up " + Arrays.stream(key).map(Field::words)
                .collect(Collectors.joining(" . ")) + " in @" + map.name() + " for its counter").build();
    }

    private static Map<Rule, String> rendered() {
        Map<Rule, String> out = new IdentityHashMap<>();
        KEY_ONLY_RULES.forEach(r -> out.put(r, NftRenderer.render(r)));
        DATA_LOADING_RULES.forEach(r -> out.put(r, NftRenderer.render(r)));
        return out;
    }

    /**
     * Adds the sets, chains and rules of the table (not the table itself) to {@code tx}. Once it
     * is committed, {@link UdpHeard#seed} fills udpheard.
     */
    static Transaction build(Transaction tx) {
        SETS.forEach(tx::add);
        CHAINS.forEach(tx::add);
        rules().forEach(tx::add);
        return tx;
    }

    /**
     * Whether the table read back has every set and chain of the shape and exactly its rules, in
     * order (someone may have flushed, deleted or changed parts; a table marking other bits
     * than {@link #MARK} has other rules).
     */
    static boolean intact(Ruleset now) {
        if (intact(now, rules())) {
            return true;
        }
        // Made by a process that learned this kernel's shape first: this one takes it from the table.
        List<Rule> other = keyOnlyLookups ? DATA_LOADING_RULES : KEY_ONLY_RULES;
        if (intact(now, other)) {
            keyOnlyLookups = other == KEY_ONLY_RULES;
            return true;
        }
        return false;
    }

    private static boolean intact(Ruleset now, List<Rule> rules) {
        if (now.tables().isEmpty()) {
            return false;
        }
        Set<String> sets = new HashSet<>();
        now.setsOf(TABLE).forEach(s -> sets.add(s.name()));
        if (!SETS.stream().allMatch(s -> sets.contains(s.name()))) {
            return false;
        }
        for (Chain c : CHAINS) {
            // An older gatun's forward chain ran at another priority, with other rules.
            boolean there = now.chainsOf(TABLE).stream().anyMatch(x -> x.name().equals(c.name())
                    && x.isBase() == c.isBase() && (!c.isBase() || x.base().priority() == c.base().priority()));
            // Rule by rule, in order: a rule deleted, changed or added by someone else is damage.
            List<Rule> want = rules.stream().filter(r -> r.chain().equals(c.name())).toList();
            List<Rule> have = now.rulesOf(c);
            if (!there || have.size() != want.size()) {
                return false;
            }
            for (int i = 0; i < want.size(); i++) {
                // In nft's words: the kernel fills in registers and flags the built rule leaves implicit.
                if (!NftRenderer.render(have.get(i)).equals(RENDERED.get(want.get(i)))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether the table read back has chain prerouting-raw with exactly its rules (the loopback drops). */
    static boolean guardsLoopback(Ruleset now) {
        if (now.tables().isEmpty() || now.chainsOf(TABLE).stream().noneMatch(c -> c.name().equals(PREROUTING_RAW.name())
                && c.isBase() && c.base().priority() == PREROUTING_RAW.base().priority())) {
            return false;
        }
        List<String> want = KEY_ONLY_RULES.stream().filter(r -> r.chain().equals(PREROUTING_RAW.name()))
                .map(RENDERED::get).toList();
        return now.rulesOf(PREROUTING_RAW).stream().map(NftRenderer::render).toList().equals(want);
    }

    /** Whether gatun's table is there (read without its elements). */
    static boolean isThere(Nftables nft) {
        return !nft.listWithoutElements(TABLE).tables().isEmpty();
    }

    /**
     * Makes the table, its sets and its rules in one transaction, for a caller that found no
     * table. The table is created exclusively, so of two processes racing here exactly one adds
     * the rules; the other's EEXIST is no error.
     */
    static void create(Nftables nft) {
        Transaction tx = build(nft.transaction().create(TABLE));
        try {
            tx.commit();
            UdpHeard.seed(nft);
        } catch (NetlinkException e) {
            if (fellBackFrom(e)) {
                create(nft);
            } else if (!e.isAlreadyExists()) {
                throw e;
            }
        }
    }
}
