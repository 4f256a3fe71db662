package dev.gatun.driver.foreign;

import dev.gatun.GatunException;
import dev.gatun.netns.Tool;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Chain;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.Table;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The other firewalls of a host namespace, and the paths they would drop for gatun's bridges.
 * In nftables an {@code accept} ends only its own base chain: a drop in any other chain at the
 * forward hook still drops the packet. So where another tool drops forwarded traffic, gatun
 * opens the way for its own bridges only, each tool in its own terms, without changing that
 * tool's policy or anything else of it:
 * <ul>
 * <li>iptables (either variant, both families): {@link XtablesForward};</li>
 * <li>firewalld: its {@code trusted} zone ({@link FirewalldZone});</li>
 * <li>any other nftables table: gatun cannot edit it, so it names the one rule that accepts
 * gatun's {@link AcceptMark} ({@link NftablesDrops}).</li>
 * </ul>
 * Everything gatun adds is removed when its last bridge is, and put back by a repair.
 */
public final class ForeignFirewalls {

    private static final System.Logger LOG = System.getLogger("dev.gatun");

    private final NetworkNamespace host;
    private final List<XtablesForward> xtables;
    private final FirewalldZone firewalld;
    private final String gatunTable;
    private final int gatunPriority;
    private final int mark;
    /** firewalld's table handle and the bridges last put in its zone: a reload makes a new table. */
    private volatile String firewalldSynced;

    private ForeignFirewalls(NetworkNamespace host, List<XtablesForward> xtables, FirewalldZone firewalld,
                             String gatunTable, int gatunPriority, int mark) {
        this.host = host;
        this.xtables = xtables;
        this.firewalld = firewalld;
        this.gatunTable = gatunTable;
        this.gatunPriority = gatunPriority;
        this.mark = mark;
    }

    /**
     * The firewalls of {@code host}, for gatun's table {@code inet gatunTable} whose forward chain
     * runs at {@code gatunPriority} and marks with {@code mark}. {@code ownVariant} ("-legacy",
     * "-nft" or null) is the iptables variant that gatun's own iptables driver programs, which
     * needs no opening.
     */
    public static ForeignFirewalls of(NetworkNamespace host, String gatunTable, int gatunPriority, int mark,
                                      String ownVariant) {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        Tool tool = new Tool(host, path, Duration.ofSeconds(60));
        return of(tool, gatunTable, gatunPriority, mark, ownVariant);
    }

    /** As {@link #of(NetworkNamespace, String, int, int, String)}, running the other tools with {@code tool}. */
    static ForeignFirewalls of(Tool tool, String gatunTable, int gatunPriority, int mark, String ownVariant) {
        NetworkNamespace host = tool.namespace();
        List<XtablesForward> xtables = new ArrayList<>();
        for (String suffix : List.of("-legacy", "-nft")) {
            if (!suffix.equals(ownVariant)) {
                for (boolean v6 : new boolean[] {false, true}) {
                    XtablesForward x = new XtablesForward(tool, suffix, v6);
                    if (x.installed()) {
                        xtables.add(x);
                    }
                }
            }
        }
        if (xtables.isEmpty() && ownVariant == null) {
            // An iptables without variants (before 1.8): the one there is.
            for (boolean v6 : new boolean[] {false, true}) {
                XtablesForward x = new XtablesForward(tool, "", v6);
                if (x.installed()) {
                    xtables.add(x);
                }
            }
        }
        // firewalld on the system bus; an embedder (or a test) may name another one.
        return new ForeignFirewalls(host, xtables, new FirewalldZone(FirewalldZone.systemBus()), gatunTable, gatunPriority,
                mark);
    }

    /**
     * Whether a change to these firewalls can pass without an nftables notification, so that a
     * caller who watches those must still look now and then: only while legacy iptables, which
     * notifies nobody, has a filter table here (read from the kernel's list, no process started).
     * iptables-nft, firewalld and every other nftables table notify each change they make.
     */
    public boolean needPolling() {
        return xtables.stream().anyMatch(x -> !x.notifies() && x.filterMayExist(null));
    }

    /** Every foreign drop and whether {@code bridges} get through it now; changes nothing. */
    public List<ForeignDrop> survey(List<String> bridges) {
        List<ForeignDrop> out = new ArrayList<>();
        Ruleset now;
        try {
            now = ruleset();
        } catch (GatunException e) {
            out.add(new ForeignDrop("nftables", "the ruleset", "could not be read", e.getMessage(), false));
            now = null;
        }
        for (XtablesForward x : xtables) {
            try {
                if (x.filterMayExist(now)) {
                    x.state(x.read(), bridges).ifPresent(out::add);
                }
            } catch (GatunException e) {
                out.add(new ForeignDrop(x.label(), "filter FORWARD", "could not be read", e.getMessage(), false));
            }
        }
        if (now == null) {
            return out;
        }
        if (firewalldRuns(now)) {
            out.add(firewalldState(bridges));
        }
        out.addAll(NftablesDrops.find(now, gatunTable, gatunPriority, mark, this::handledElsewhere));
        return out;
    }

    private ForeignDrop firewalldState(List<String> bridges) {
        String where = "zone " + FirewalldZone.ZONE;
        try {
            List<String> missing = firewalld.missing(bridges);
            boolean open = !bridges.isEmpty() && missing.isEmpty();
            return new ForeignDrop("firewalld", where, "it rejects forwarded traffic",
                    bridges.isEmpty() ? "gatun puts its bridges in the zone when it creates a network"
                            : open ? "gatun's bridges " + String.join(", ", bridges) + " are in the zone"
                            : "not in the zone: " + String.join(", ", missing), open);
        } catch (GatunException e) {
            return new ForeignDrop("firewalld", where, "it rejects forwarded traffic", e.getMessage(), false);
        }
    }

    /**
     * What {@link #open} changed, one line each; what it could not do; and the drops it cannot
     * open itself, each with the rule the user adds (another tool's nftables table).
     */
    public record Opened(List<String> changed, List<String> failures, List<String> unopened) {}

    /**
     * Opens every foreign drop for {@code bridges} (all of gatun's bridges; empty removes
     * everything gatun added), and names those that need the user's rule. One firewall's failure
     * does not stop the others.
     */
    public Opened open(List<String> bridges) {
        List<String> changed = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        List<String> unopened = new ArrayList<>();
        Ruleset now;
        try {
            now = ruleset();
        } catch (GatunException e) {
            failures.add(e.getMessage());
            now = null;
        }
        for (XtablesForward x : xtables) {
            try {
                // A variant without a filter table has nothing to open and nothing of gatun's to remove.
                if (x.filterMayExist(now)) {
                    x.sync(bridges).ifPresent(changed::add);
                }
            } catch (GatunException e) {
                failures.add(e.getMessage());
            }
        }
        if (now == null) {
            return new Opened(List.copyOf(changed), List.copyOf(failures), List.of());
        }
        try {
            Optional<Table> fw = firewalldTable(now);
            String synced = fw.map(t -> t.handle() + " " + bridges).orElse(null);
            if (fw.isPresent() && !bridges.isEmpty() && !synced.equals(firewalldSynced)) {
                firewalld.add(bridges).ifPresent(changed::add);
                firewalldSynced = synced;
            }
            for (ForeignDrop d : NftablesDrops.find(now, gatunTable, gatunPriority, mark, this::handledElsewhere)) {
                if (!d.open() && !bridges.isEmpty()) {
                    unopened.add(d.where() + " drops traffic of gatun's bridges: " + d.action());
                }
            }
        } catch (GatunException e) {
            failures.add(e.getMessage());
        }
        return new Opened(List.copyOf(changed), List.copyOf(failures), List.copyOf(unopened));
    }

    /** Takes a removed bridge out of what gatun added to firewalld (iptables follow from {@link #open}). */
    public void release(String bridge) {
        try {
            if (firewalldRuns(ruleset())) {
                firewalld.remove(bridge);
                firewalldSynced = null;
            }
        } catch (GatunException e) {
            LOG.log(System.Logger.Level.WARNING, "could not take {0} out of firewalld: {1}", bridge, e.getMessage());
        }
    }

    private boolean handledElsewhere(Chain c) {
        boolean viaXtables = NftablesDrops.isXtables(c) && xtables.stream().anyMatch(x -> x.label().endsWith("-nft")
                && x.label().startsWith(c.family() == Family.IP6 ? "ip6tables" : "iptables"));
        return viaXtables || NftablesDrops.isFirewalld(c);
    }

    private static boolean firewalldRuns(Ruleset now) {
        return firewalldTable(now).isPresent();
    }

    /** firewalld's table, {@code inet firewalld}: there while firewalld (with its nftables backend) runs. */
    private static Optional<Table> firewalldTable(Ruleset now) {
        return now.tables().stream().filter(t -> t.family() == Family.INET && t.name().equals("firewalld")).findFirst();
    }

    /** Tables, chains, sets and rules; no elements: gatun's maps can hold 100,000, and a drop is in a rule. */
    private Ruleset ruleset() {
        try (Nftables nft = Nftables.open(host)) {
            return nft.listWithoutElements();
        }
    }

    /** What the iptables driver's variant is called here: "-nft" or "-legacy", from {@code iptables --version}. */
    public static Optional<String> variantOf(String versionText) {
        if (versionText.contains("nf_tables")) {
            return Optional.of("-nft");
        }
        return versionText.contains("legacy") ? Optional.of("-legacy") : Optional.empty();
    }
}
