package dev.gatun.driver.foreign;

import dev.gatun.GatunException;
import dev.gatun.netns.Tool;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Ruleset;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The FORWARD chain of one iptables variant and family (iptables-nft, ip6tables-legacy, ...).
 * Where it drops (policy DROP, a DROP or REJECT rule, Docker's chains), gatun's bridges get a
 * chain of their own, {@value #CHAIN}, that accepts traffic into and out of them, and one jump
 * to it: at the top of {@code DOCKER-USER} when Docker's chains exist (Docker evaluates it first
 * and keeps it across restarts), else at the top of FORWARD. gatun's own forward chain still
 * decides what may pass, so this never lets through more than gatun allows. Changes apply
 * together: for iptables-nft as one nftables transaction over netlink, with no process started
 * ({@link NetlinkFilterTable}); for legacy x_tables through one {@code iptables-restore -w
 * --noflush} of the filter table ({@link SavedFilterTable}).
 */
final class XtablesForward {

    static final String CHAIN = "GATUN-ALLOW";
    static final String DOCKER_USER = "DOCKER-USER";
    private static final String JUMP = " -j " + CHAIN;

    private final Tool tool;
    private final String suffix;
    private final boolean v6;
    private final FilterTable table;

    /** {@code suffix} is "-legacy", "-nft", or "" for a host whose iptables has no variants. */
    XtablesForward(Tool tool, String suffix, boolean v6) {
        this.tool = tool;
        this.suffix = suffix;
        this.v6 = v6;
        this.table = suffix.equals("-nft") ? new NetlinkFilterTable(tool.namespace(), v6) : new SavedFilterTable(tool, label());
    }

    /** "iptables-nft", "ip6tables-legacy": how the user names it. */
    String label() {
        return (v6 ? "ip6tables" : "iptables") + suffix;
    }

    private String program(String what) {
        return label() + "-" + what;
    }

    /**
     * Whether this variant may have a filter table now, answered without starting its tools:
     * the nft variant's tables are nftables tables ({@code now}, null when unknown); the legacy
     * ones the kernel lists itself. A table that is not there drops nothing and holds nothing
     * of gatun's, so the backstop need not read it every few seconds.
     */
    boolean filterMayExist(Ruleset now) {
        if (suffix.equals("-nft")) {
            Family family = v6 ? Family.IP6 : Family.IP;
            return now == null || now.tables().stream().anyMatch(t -> t.family() == family && t.name().equals("filter"));
        }
        return LegacyTables.hasFilter(tool.namespace(), v6);
    }

    /** Whether its changes arrive as nftables notifications: iptables-nft's do, legacy x_tables' do not. */
    boolean notifies() {
        return suffix.equals("-nft");
    }

    /** Whether its tables can be there: its tools are installed (looked up on PATH, not run). */
    boolean installed() {
        return tool.find(program("save")) != null && tool.find(program("restore")) != null;
    }

    /**
     * The filter table as {@code -save} prints it: chains with their policies, and rules; read
     * over netlink, each rule's handle ({@code handles}, in the order of {@code rules}) and the
     * generation it was read at, else zeros.
     */
    record Filter(boolean exists, String forwardPolicy, Set<String> chains, List<String> rules, List<Long> handles,
                  int generation) {

        static Filter parse(String saved) {
            boolean in = false;
            boolean exists = false;
            String policy = null;
            Set<String> chains = new LinkedHashSet<>();
            List<String> rules = new ArrayList<>();
            for (String raw : saved.split("\n")) {
                String line = raw.strip();
                if (line.startsWith("*")) {
                    in = line.equals("*filter");
                    exists |= in;
                } else if (in && line.startsWith(":")) {
                    String[] words = line.substring(1).split(" ");
                    chains.add(words[0]);
                    if (words[0].equals("FORWARD") && words.length > 1) {
                        policy = words[1];
                    }
                } else if (in && line.startsWith("-A ")) {
                    rules.add(line);
                }
            }
            return new Filter(exists, policy, chains, rules, rules.stream().map(r -> 0L).toList(), 0);
        }

        /** Why this table drops forwarded traffic, or empty when it does not. */
        Optional<String> drops() {
            List<String> why = new ArrayList<>();
            if ("DROP".equals(forwardPolicy)) {
                why.add("policy DROP");
            }
            if (rules.stream().anyMatch(r -> r.startsWith("-A FORWARD ") && (r.endsWith(" -j DROP") || r.contains(" -j REJECT")))) {
                why.add("a rule that drops");
            }
            if (chains.contains(DOCKER_USER)) {
                why.add("Docker's chains");
            }
            return why.isEmpty() ? Optional.empty() : Optional.of(String.join(", ", why));
        }

        String parent() {
            return chains.contains(DOCKER_USER) ? DOCKER_USER : "FORWARD";
        }

        List<String> jumps() {
            return rules.stream().filter(r -> r.endsWith(JUMP) && r.split(" ").length == 4).toList();
        }

        List<String> allowRules() {
            return rules.stream().filter(r -> r.startsWith("-A " + CHAIN + " ")).toList();
        }

        /** Whether the one jump is the first rule of the chain it belongs in. */
        boolean jumpInPlace() {
            String first = rules.stream().filter(r -> r.startsWith("-A " + parent() + " ")).findFirst().orElse("");
            return jumps().size() == 1 && first.equals("-A " + parent() + JUMP);
        }
    }

    Filter read() {
        return table.read();
    }

    /** What this variant does to gatun's bridges now (empty: it drops nothing). */
    Optional<ForeignDrop> state(Filter f, List<String> bridges) {
        if (!f.exists()) {
            return Optional.empty();
        }
        return f.drops().map(why -> {
            boolean open = !bridges.isEmpty() && f.jumpInPlace() && f.allowRules().equals(allowRules(bridges));
            String action = open ? "gatun's bridges accepted in chain " + CHAIN + ", jumped to from the top of " + f.parent()
                    : bridges.isEmpty() ? "gatun opens it for its bridges when it creates a network"
                    : "not open: chain " + CHAIN + " or its jump from " + f.parent() + " is missing";
            return new ForeignDrop(label(), "filter FORWARD", why, action, open);
        });
    }

    /**
     * Brings the chain and its jump to what {@code bridges} need: made or rewritten where the
     * table drops, removed where it no longer does or no bridge is left. Returns what it
     * changed, empty when everything was in place.
     */
    Optional<String> sync(List<String> bridges) {
        for (int attempt = 1; ; attempt++) {
            Filter f = read();
            List<String> script = script(f, bridges);
            if (script.isEmpty()) {
                return Optional.empty();
            }
            Optional<String> failed = table.apply(f, script);
            if (failed.isEmpty()) {
                boolean wanted = script.stream().anyMatch(l -> l.startsWith("-I "));
                boolean kept = script.stream().anyMatch(l -> l.startsWith("-A "));
                return Optional.of(wanted || kept ? "the jump to " + CHAIN + " in " + label() + " " + f.parent()
                        + " and its accepts for " + String.join(", ", bridges)
                        : "chain " + CHAIN + " from " + label() + " (nothing of gatun's left there)");
            }
            // Someone changed the table between the read and the restore: read again, once.
            if (attempt >= 2) {
                throw new GatunException("could not open " + label() + " filter FORWARD for gatun's bridges: "
                        + failed.get());
            }
        }
    }

    /** The restore lines that take {@code f} to the wanted state; empty when it is there. */
    static List<String> script(Filter f, List<String> bridges) {
        List<String> lines = new ArrayList<>();
        boolean wanted = f.exists() && !bridges.isEmpty() && f.drops().isPresent();
        if (!wanted) {
            if (f.chains().contains(CHAIN)) {
                f.jumps().forEach(j -> lines.add("-D " + j.split(" ")[1] + JUMP));
                lines.add("-F " + CHAIN);
                lines.add("-X " + CHAIN);
            }
            return lines;
        }
        List<String> allow = allowRules(bridges);
        if (!f.chains().contains(CHAIN) || !f.allowRules().equals(allow)) {
            lines.add(":" + CHAIN + " - [0:0]"); // declaring an existing chain with --noflush empties it
            allow.forEach(lines::add);
        }
        if (!f.jumpInPlace()) {
            f.jumps().forEach(j -> lines.add("-D " + j.split(" ")[1] + JUMP));
            lines.add("-I " + f.parent() + " 1" + JUMP);
        }
        return lines;
    }

    /** The rules of {@value #CHAIN}, as {@code -save} prints them. Bridge names are checked interface names. */
    static List<String> allowRules(List<String> bridges) {
        List<String> out = new ArrayList<>();
        for (String b : bridges.stream().sorted().toList()) {
            out.add("-A " + CHAIN + " -i " + b + " -j ACCEPT");
            out.add("-A " + CHAIN + " -o " + b + " -j ACCEPT");
        }
        return out;
    }
}
