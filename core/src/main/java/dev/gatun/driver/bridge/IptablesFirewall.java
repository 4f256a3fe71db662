package dev.gatun.driver.bridge;

import dev.gatun.EnvironmentException;
import dev.gatun.GatunException;
import dev.gatun.netns.Tool;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.foreign.ForeignFirewalls;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.InterfaceNames;
import dev.gatun.rtnl.Prefix;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Supplier;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The legacy backend: iptables and ip6tables rules in gatun's own chains, hooked from the
 * built-in chains once. Every call that can take the xtables lock waits for it ({@code -w});
 * the changes of one call go through one {@code iptables-restore -w --noflush} per table, so
 * they are atomic per table. Every value written into a rule is validated or percent-encoded,
 * so no input can change what a rule means.
 */
final class IptablesFirewall implements Firewall {

    /** Which iptables programs to run. */
    enum Variant {
        SYSTEM("iptables", ""), LEGACY("iptables-legacy", "-legacy"), NFT("iptables-nft", "-nft");

        final String label;
        final String suffix;

        Variant(String label, String suffix) {
            this.label = label;
            this.suffix = suffix;
        }

        String program(boolean v6, String tool) {
            // iptables-legacy-restore, ip6tables-nft-save, iptables, ...
            return (v6 ? "ip6tables" : "iptables") + suffix + (tool.isEmpty() ? "" : "-" + tool);
        }
    }

    static final String DNAT = "GATUN-DNAT";
    static final String POSTROUTING = "GATUN-POSTROUTING";
    static final String FORWARD = "GATUN-FORWARD";
    static final String BRIDGES = "GATUN-BRIDGES";
    /** Docker's two-stage isolation: leaving a gatun bridge for another (not to a published port) is dropped. */
    static final String ISOLATION_1 = "GATUN-ISOLATION-1";
    static final String ISOLATION_2 = "GATUN-ISOLATION-2";
    /**
     * In table raw, before connection tracking and the dnat rules: 127.0.0.0/8 (::1) from any
     * interface but lo is dropped, so that route_localnet opens no door (see GatunRuleset).
     */
    static final String LOOPBACK = "GATUN-LOOPBACK";
    /** Seconds every iptables call waits for the xtables lock. */
    static final String WAIT_SECONDS = "30";

    private final Variant variant;
    private final Tool tool;

    IptablesFirewall(NetworkNamespace host, Variant variant, String searchPath) {
        this.variant = variant;
        this.tool = new Tool(host, searchPath, Duration.ofSeconds(Long.parseLong(WAIT_SECONDS) * 2));
        if (tool.find(variant.program(false, "")) == null) {
            throw new EnvironmentException(variant.program(false, "") + " is not installed; install iptables or use the nftables driver");
        }
        String version = tool.check(variant.program(false, ""), List.of("--version"), null, "read the iptables version");
        Matcher m = Pattern.compile("v(\\d+)\\.(\\d+)\\.(\\d+)").matcher(version);
        if (!m.find() || versionBelow(m, 1, 6, 2)) {
            throw new EnvironmentException(version.strip() + " cannot wait for the xtables lock in iptables-restore (-w needs "
                    + "iptables 1.6.2 or later); gatun will not run it without waiting");
        }
    }

    private static boolean versionBelow(Matcher m, int major, int minor, int patch) {
        int a = Integer.parseInt(m.group(1));
        int b = Integer.parseInt(m.group(2));
        int c = Integer.parseInt(m.group(3));
        return a != major ? a < major : b != minor ? b < minor : c < patch;
    }

    @Override
    public String name() {
        return variant.label;
    }

    /** The other firewalls, less this driver's own iptables variant (its own chains already accept). */
    @Override
    public ForeignFirewalls foreignFirewalls() {
        String own = switch (variant) {
            case LEGACY -> "-legacy";
            case NFT -> "-nft";
            case SYSTEM -> ForeignFirewalls.variantOf(tool.check(variant.program(false, ""), List.of("--version"), null,
                    "read the iptables version")).orElse("");
        };
        return ForeignFirewalls.of(tool.namespace(), "gatun", Integer.MAX_VALUE, 0, own);
    }

    private boolean hasIpv6() {
        return tool.find(variant.program(true, "")) != null;
    }

    // ------------------------------------------------------------------ the static part

    @Override
    public void ensure(List<Network> existing) {
        for (boolean v6 : hasIpv6() ? new boolean[] {false, true} : new boolean[] {false}) {
            ensureChain(v6, "nat", DNAT);
            ensureChain(v6, "nat", POSTROUTING);
            ensureChain(v6, "filter", FORWARD);
            ensureChain(v6, "filter", BRIDGES);
            ensureChain(v6, "filter", ISOLATION_1);
            ensureChain(v6, "filter", ISOLATION_2);
            ensureChain(v6, "raw", LOOPBACK);
            restore(v6, "raw", List.of("-F " + LOOPBACK, "-A " + LOOPBACK + " ! -i lo -d " + (v6 ? "::1/128" : "127.0.0.0/8")
                    + " -m comment --comment \"loopback addresses come from lo only\" -j DROP"), "write chain " + LOOPBACK);
            ensureRule(v6, "raw", "PREROUTING", true, List.of("-j", LOOPBACK));
            ensureRule(v6, "nat", "PREROUTING", false, List.of("-m", "addrtype", "--dst-type", "LOCAL", "-j", DNAT));
            ensureRule(v6, "nat", "OUTPUT", false, List.of("-m", "addrtype", "--dst-type", "LOCAL", "-j", DNAT));
            ensureRule(v6, "nat", "POSTROUTING", false, List.of("-j", POSTROUTING));
            // Written whole, in one atomic restore: the order matters (isolation before the
            // bridges' accepts), and a chain made by an older gatun lacks the isolation jump.
            restore(v6, "filter", List.of("-F " + FORWARD,
                    "-A " + FORWARD + " -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
                    "-A " + FORWARD + " -j " + ISOLATION_1,
                    "-A " + FORWARD + " -j " + BRIDGES), "write chain " + FORWARD);
            ensureRule(v6, "filter", "FORWARD", true, List.of("-j", FORWARD));
        }
        // Networks made by an older gatun have no isolation rules yet.
        for (Network n : existing) {
            for (Prefix subnet : n.subnets()) {
                if (!subnet.isIpv6() || hasIpv6()) {
                    List<String> leave = isolation(n.bridge()).getFirst();
                    if (tool.run(variant.program(subnet.isIpv6(), ""), check("filter", leave), null).exitCode() != 0) {
                        restore(subnet.isIpv6(), "filter", isolation(n.bridge()).stream()
                                .map(rule -> "-A " + String.join(" ", rule)).toList(),
                                "add the isolation rules of bridge " + n.bridge());
                    }
                }
            }
        }
    }

    /** A bridge's two isolation rules, as chain and rule words: leaving it (unless DNATed) goes to stage 2, which drops what enters it. */
    private static List<List<String>> isolation(String bridge) {
        return List.of(
                List.of(ISOLATION_1, "-i", bridge, "!", "-o", bridge, "-m", "conntrack", "!", "--ctstate", "DNAT",
                        "-j", ISOLATION_2),
                List.of(ISOLATION_2, "-o", bridge, "-j", "DROP"));
    }

    private static List<String> check(String table, List<String> chainAndRule) {
        List<String> out = new ArrayList<>(List.of("-w", WAIT_SECONDS, "-t", table, "-C"));
        out.addAll(chainAndRule);
        return out;
    }

    @Override
    public boolean guardsLoopback() {
        Tool.Result prerouting = tool.run(variant.program(false, ""), List.of("-w", WAIT_SECONDS, "-t", "raw", "-S",
                "PREROUTING"), null);
        Tool.Result chain = tool.run(variant.program(false, ""), List.of("-w", WAIT_SECONDS, "-t", "raw", "-S", LOOPBACK),
                null);
        return prerouting.exitCode() == 0 && prerouting.stdout().lines().anyMatch(l -> l.equals("-A PREROUTING -j " + LOOPBACK))
                && chain.exitCode() == 0 && chain.stdout().lines().anyMatch(l -> l.startsWith("-A " + LOOPBACK + " -d 127.0.0.0/8 ! -i lo ")
                && l.endsWith("-j DROP"));
    }

    @Override
    public void teardown() {
        for (boolean v6 : hasIpv6() ? new boolean[] {false, true} : new boolean[] {false}) {
            restore(v6, "nat", List.of(
                    "-D PREROUTING -m addrtype --dst-type LOCAL -j " + DNAT,
                    "-D OUTPUT -m addrtype --dst-type LOCAL -j " + DNAT,
                    "-D POSTROUTING -j " + POSTROUTING,
                    "-F " + DNAT, "-F " + POSTROUTING, "-X " + DNAT, "-X " + POSTROUTING), "remove gatun's nat chains");
            // An older gatun made none, and someone may have taken the jump away: what is there goes.
            if (chainExists(v6, "raw", LOOPBACK)) {
                List<String> lines = new ArrayList<>();
                if (tool.run(variant.program(v6, ""), check("raw", List.of("PREROUTING", "-j", LOOPBACK)), null).exitCode() == 0) {
                    lines.add("-D PREROUTING -j " + LOOPBACK);
                }
                lines.addAll(List.of("-F " + LOOPBACK, "-X " + LOOPBACK));
                restore(v6, "raw", lines, "remove gatun's raw chain");
            }
            restore(v6, "filter", List.of("-D FORWARD -j " + FORWARD, "-F " + FORWARD, "-F " + BRIDGES,
                    "-F " + ISOLATION_1, "-F " + ISOLATION_2, "-X " + FORWARD, "-X " + BRIDGES, "-X " + ISOLATION_1,
                    "-X " + ISOLATION_2), "remove gatun's filter chains");
        }
    }

    private boolean chainExists(boolean v6, String table, String chain) {
        return tool.run(variant.program(v6, ""), List.of("-w", WAIT_SECONDS, "-t", table, "-S", chain), null).exitCode() == 0;
    }

    private void ensureChain(boolean v6, String table, String chain) {
        if (!chainExists(v6, table, chain)) {
            tool.check(variant.program(v6, ""), List.of("-w", WAIT_SECONDS, "-t", table, "-N", chain), null,
                    "create chain " + chain + " in table " + table);
        }
    }

    /** Adds the rule unless -C finds it; {@code first} inserts it at the top. */
    private void ensureRule(boolean v6, String table, String chain, boolean first, List<String> spec) {
        List<String> rule = new ArrayList<>(List.of(chain));
        rule.addAll(spec);
        if (tool.run(variant.program(v6, ""), check(table, rule), null).exitCode() == 0) {
            return;
        }
        List<String> add = new ArrayList<>(List.of("-w", WAIT_SECONDS, "-t", table));
        add.addAll(first ? List.of("-I", chain, "1") : List.of("-A", chain));
        add.addAll(spec);
        tool.check(variant.program(v6, ""), add, null, "add a rule to " + chain + " in table " + table);
    }

    /** iptables rules cannot be compared and put back atomically the way one nftables transaction can. */
    @Override
    public Restored restore(List<Network> networks, List<PortMapping> wanted) {
        throw new GatunException("repairing the packet filter is supported on the nftables driver only, not on "
                + name());
    }

    // ------------------------------------------------------------------ networks

    @Override
    public void network(BridgeRules rules, boolean add) {
        String bridge = rules.bridge();
        InterfaceNames.check(bridge);
        for (Prefix subnet : rules.v6() == null ? List.of(rules.v4()) : List.of(rules.v4(), rules.v6())) {
            boolean ipv6 = subnet.isIpv6();
            if (ipv6 && !hasIpv6()) {
                throw new GatunException(variant.program(true, "") + " is not installed, needed for IPv6 subnet " + subnet);
            }
            String op = add ? "-A" : "-D";
            List<String> nat = new ArrayList<>();
            String net = subnet.network().toString();
            if (!ipv6) {
                nat.add(op + " " + POSTROUTING + " -s 127.0.0.0/8 -o " + bridge + " -j MASQUERADE");
            }
            nat.add(op + " " + POSTROUTING + " -s " + net + " -o " + bridge + " -m conntrack --ctstate DNAT -j MASQUERADE");
            if (rules.masquerade() && !rules.internal()) {
                nat.add(op + " " + POSTROUTING + " -s " + net + " ! -o " + bridge + " -j MASQUERADE");
            }
            List<String> filter = new ArrayList<>();
            if (rules.internal()) {
                filter.add(op + " " + BRIDGES + " -i " + bridge + " ! -o " + bridge + " -j DROP");
                filter.add(op + " " + BRIDGES + " ! -i " + bridge + " -o " + bridge + " -j DROP");
            }
            for (List<String> rule : isolation(bridge)) {
                filter.add(op + " " + String.join(" ", rule));
            }
            filter.add(op + " " + BRIDGES + " -o " + bridge + " -m conntrack --ctstate DNAT -j ACCEPT");
            if (!rules.icc()) {
                filter.add(op + " " + BRIDGES + " -i " + bridge + " -o " + bridge + " -j DROP");
            }
            filter.add(op + " " + BRIDGES + " -i " + bridge + " -j ACCEPT");
            filter.add(op + " " + BRIDGES + " -o " + bridge + " -j DROP");
            String what = (add ? "add" : "remove") + " the rules of bridge " + bridge;
            restore(ipv6, "nat", nat, what);
            restore(ipv6, "filter", filter, what);
        }
    }

    // ------------------------------------------------------------------ containers outside gatun's networks

    /** The comment of gatun's rules for a container outside its networks; {@link #LOCALNET} when it set route_localnet. */
    static final String OUTSIDE = "gatun-outside";
    static final String LOCALNET = "gatun-outside-localnet";

    @Override
    public void outside(OutsideTarget t, boolean add) {
        InterfaceNames.check(t.hostIfname());
        boolean v6 = t.isIpv6();
        if (v6 && !hasIpv6()) {
            throw new GatunException(variant.program(true, "") + " is not installed, needed for " + t.describe());
        }
        String op = add ? "-A" : "-D";
        String to = " -d " + new Prefix(t.containerIp(), v6 ? 128 : 32) + " -o " + t.hostIfname()
                + " -m conntrack --ctstate DNAT -m comment --comment " + (t.localnetByGatun() ? LOCALNET : OUTSIDE)
                + " -j MASQUERADE";
        List<String> nat = new ArrayList<>();
        if (!v6) {
            nat.add(op + " " + POSTROUTING + " -s 127.0.0.0/8" + to);
        }
        // POSTROUTING cannot match the input interface in iptables: hairpin sources are those of the route.
        nat.add(op + " " + POSTROUTING + " -s " + t.route().network() + to);
        restore(v6, "nat", nat, (add ? "add" : "remove") + " the masquerade rules of " + t.describe());
    }

    @Override
    public List<OutsideTarget> outsideTargets() {
        List<OutsideTarget> out = new ArrayList<>();
        for (boolean v6 : hasIpv6() ? new boolean[] {false, true} : new boolean[] {false}) {
            String saved = tool.check(variant.program(v6, "save"), List.of("-t", "nat"), null, "list the masquerade rules");
            for (String line : saved.split("\n")) {
                outsideTarget(line).ifPresent(out::add);
            }
        }
        return out;
    }

    /** The target of a hairpin rule {@link #outside} wrote, as iptables-save prints it. */
    static Optional<OutsideTarget> outsideTarget(String line) {
        List<String> words = List.of(line.strip().split("\\s+"));
        if (words.size() < 2 || !words.get(0).equals("-A") || !words.get(1).equals(POSTROUTING)) {
            return Optional.empty();
        }
        String source = after(words, "-s");
        String dest = after(words, "-d");
        String out = after(words, "-o");
        String comment = after(words, "--comment");
        if (source == null || dest == null || out == null || source.startsWith("127.")
                || !(OUTSIDE.equals(comment) || LOCALNET.equals(comment))) {
            return Optional.empty();
        }
        Prefix route = Prefix.parse(source);
        return Optional.of(new OutsideTarget(out, Prefix.parse(dest).address(), route, LOCALNET.equals(comment)));
    }

    private static String after(List<String> words, String option) {
        int i = words.indexOf(option);
        return i < 0 || i + 1 >= words.size() ? null : words.get(i + 1);
    }

    /** One iptables-restore per table: the lines apply together or not at all. */
    private void restore(boolean v6, String table, List<String> lines, String operation) {
        if (lines.isEmpty()) {
            return;
        }
        StringBuilder script = new StringBuilder("*").append(table).append('\n');
        lines.forEach(l -> script.append(l).append('\n'));
        script.append("COMMIT\n");
        tool.check(variant.program(v6, "restore"), List.of("-w", WAIT_SECONDS, "--noflush"), script.toString(), operation);
    }

    // ------------------------------------------------------------------ mappings

    @Override
    public MappingStore openStore(Supplier<CountedSubnets> counted) {
        return new MappingStore() {
            @Override
            public View begin() {
                Map<String, PortMapping> byKey = new LinkedHashMap<>();
                for (PortMapping m : mappings()) {
                    byKey.put(DnatRules.key(m), m);
                }
                return new View() {
                    @Override
                    public Optional<PortMapping> get(PortMapping key) {
                        return Optional.ofNullable(byKey.get(DnatRules.key(key)));
                    }

                    @Override
                    public List<PortMapping> all() {
                        return List.copyOf(byKey.values());
                    }

                    @Override
                    public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
                        for (boolean v6 : new boolean[] {false, true}) {
                            List<String> lines = new ArrayList<>();
                            deletes.stream().filter(m -> DnatRules.isV6(m) == v6)
                                    .forEach(m -> lines.add("-D " + DnatRules.rule(m)));
                            adds.stream().filter(m -> DnatRules.isV6(m) == v6)
                                    .forEach(m -> lines.add("-A " + DnatRules.rule(m)));
                            restore(v6, "nat", lines, "publish " + adds.size() + " and unpublish " + deletes.size()
                                    + " mappings");
                        }
                    }
                };
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public List<PortMapping> mappings() {
        List<PortMapping> out = new ArrayList<>();
        for (boolean v6 : hasIpv6() ? new boolean[] {false, true} : new boolean[] {false}) {
            // iptables-save takes no lock, so it takes no -w.
            String saved = tool.check(variant.program(v6, "save"), List.of("-t", "nat"), null, "list the DNAT rules");
            for (String line : saved.split("\n")) {
                DnatRules.parse(line).ifPresent(out::add);
            }
        }
        return out;
    }
}
