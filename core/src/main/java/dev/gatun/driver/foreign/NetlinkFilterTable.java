package dev.gatun.driver.foreign;

import dev.gatun.GatunException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.Chain;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Rule;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.Table;
import dev.gatun.nft.Transaction;
import dev.gatun.nft.value.Verdict;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.Opaque;
import dev.gatun.nft.expr.Registers;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The filter table of iptables-nft, which is an nftables table ({@code ip filter}, {@code ip6
 * filter}): read and changed over netlink, with no process started, in one transaction guarded
 * by the generation it was read at. What gatun writes is what {@code iptables-nft} itself writes
 * for the same lines, expression for expression, so that {@code iptables-nft-save} and
 * {@code iptables-nft -D} read it back as their own: an interface match is {@code meta iifname}
 * (or {@code oifname}) and a {@code cmp eq} of the name with its terminating NUL, every rule has a
 * counter before its verdict, and a chain of gatun's is a regular chain.
 */
final class NetlinkFilterTable implements FilterTable {

    private static final String REJECT = "REJECT";

    private final NetworkNamespace host;
    private final Family family;

    NetlinkFilterTable(NetworkNamespace host, boolean v6) {
        this.host = host;
        this.family = v6 ? Family.IP6 : Family.IP;
    }

    private Table table() {
        return Table.of(family, "filter");
    }

    @Override
    public XtablesForward.Filter read() {
        try (Nftables nft = Nftables.open(host)) {
            // The generation first: a change after it makes the guarded commit fail, not go unseen.
            int generation = nft.generation();
            return filter(nft.listWithoutElements(table()), generation);
        }
    }

    /** The table as {@code iptables-nft-save} would show what gatun reads of it. */
    XtablesForward.Filter filter(Ruleset r, int generation) {
        Set<String> chains = new LinkedHashSet<>();
        String policy = null;
        List<String> lines = new ArrayList<>();
        List<Long> handles = new ArrayList<>();
        boolean exists = r.tables().stream().anyMatch(t -> t.family() == family && t.name().equals("filter"));
        for (Chain c : r.chains()) {
            if (c.family() != family || !c.table().equals("filter")) {
                continue;
            }
            chains.add(c.name());
            if (c.name().equals("FORWARD") && c.isBase()) {
                policy = c.base().policy().name();
            }
            for (Rule rule : r.rulesOf(c)) {
                lines.add(saveLine(rule));
                handles.add(rule.handle());
            }
        }
        return new XtablesForward.Filter(exists, policy, chains, lines, handles, generation);
    }

    /**
     * A rule in {@code -save} syntax where it is one of the shapes gatun writes (a jump, an
     * interface accepted) or drops (a DROP verdict, a REJECT), else a line that matches none.
     */
    static String saveLine(Rule r) {
        List<Expr> e = r.expressions().stream().filter(x -> !(x instanceof Counter)).toList();
        String head = "-A " + r.chain();
        if (e.size() == 1 && e.getFirst() instanceof VerdictExpr v && v.verdict().code() == Verdict.Code.JUMP) {
            return head + " -j " + v.verdict().chain();
        }
        if (e.size() == 3 && e.get(0) instanceof Meta m && (m.key() == Meta.Key.IIFNAME || m.key() == Meta.Key.OIFNAME)
                && e.get(1) instanceof Cmp c && c.op() == CmpOp.EQ && c.sreg() == m.dreg()
                && e.get(2) instanceof VerdictExpr v && v.verdict().code() == Verdict.Code.ACCEPT) {
            Optional<String> name = interfaceName(c.data());
            if (name.isPresent()) {
                return head + (m.key() == Meta.Key.IIFNAME ? " -i " : " -o ") + name.get() + " -j ACCEPT";
            }
        }
        Expr last = e.isEmpty() ? null : e.getLast();
        if (last instanceof VerdictExpr v && v.verdict().code() == Verdict.Code.DROP) {
            return head + " (a rule) -j DROP";
        }
        if (last instanceof Reject || last instanceof Opaque o && o.kind().equals("target") && targetName(o).equals(REJECT)) {
            return head + " (a rule) -j " + REJECT;
        }
        return head + " (a rule gatun does not read)";
    }

    /** A name with its NUL and nothing after, as iptables-nft compares it (a wildcard "br+" has no NUL). */
    private static Optional<String> interfaceName(Bytes data) {
        byte[] b = data.toArray();
        if (b.length < 2 || b[b.length - 1] != 0) {
            return Optional.empty();
        }
        for (int i = 0; i < b.length - 1; i++) {
            if (b[i] == 0) {
                return Optional.empty();
            }
        }
        return Optional.of(new String(b, 0, b.length - 1, StandardCharsets.US_ASCII));
    }

    private static String targetName(Opaque o) {
        for (Opaque.Attribute a : o.attributes()) {
            if (a.type() == kernel_h.NFTA_TARGET_NAME) {
                byte[] v = a.value().toArray();
                int end = 0;
                while (end < v.length && v[end] != 0) {
                    end++;
                }
                return new String(v, 0, end, StandardCharsets.US_ASCII);
            }
        }
        return "";
    }

    @Override
    public Optional<String> apply(XtablesForward.Filter seen, List<String> script) {
        try (Nftables nft = Nftables.open(host)) {
            Transaction tx = nft.transaction().guardGeneration(seen.generation());
            Map<String, Deque<Long>> jumps = jumpHandles(seen);
            for (String line : script) {
                translate(tx, line, jumps);
            }
            tx.commit();
            return Optional.empty();
        } catch (GatunException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** The handles of each chain's rules that only jump to gatun's chain, in the order {@code -D} would find them. */
    private static Map<String, Deque<Long>> jumpHandles(XtablesForward.Filter seen) {
        Map<String, Deque<Long>> out = new HashMap<>();
        for (int i = 0; i < seen.rules().size(); i++) {
            String[] w = seen.rules().get(i).split(" ");
            if (w.length == 4 && w[2].equals("-j") && w[3].equals(XtablesForward.CHAIN)) {
                out.computeIfAbsent(w[1], k -> new ArrayDeque<>()).add(seen.handles().get(i));
            }
        }
        return out;
    }

    /** One line of {@link XtablesForward#script} as what iptables-nft-restore would send for it. */
    private void translate(Transaction tx, String line, Map<String, Deque<Long>> jumps) {
        String[] w = line.split(" ");
        Chain gatun = Chain.regular(table(), XtablesForward.CHAIN);
        if (line.equals(":" + XtablesForward.CHAIN + " - [0:0]")) {
            tx.add(gatun).flush(gatun); // as restore does: declared, and emptied if it was there
        } else if (line.equals("-F " + XtablesForward.CHAIN)) {
            tx.flush(gatun);
        } else if (line.equals("-X " + XtablesForward.CHAIN)) {
            tx.delete(gatun);
        } else if (w.length == 6 && w[0].equals("-A") && w[1].equals(XtablesForward.CHAIN) && w[4].equals("-j")
                && w[5].equals("ACCEPT") && (w[2].equals("-i") || w[2].equals("-o"))) {
            byte[] name = Arrays.copyOf(w[3].getBytes(StandardCharsets.US_ASCII), w[3].length() + 1);
            tx.add(Rule.in(table(), XtablesForward.CHAIN)
                    .raw(new Meta(w[2].equals("-i") ? Meta.Key.IIFNAME : Meta.Key.OIFNAME, Registers.REG1),
                            new Cmp(Registers.REG1, CmpOp.EQ, Bytes.of(name)), new Counter(0, 0),
                            new VerdictExpr(Verdict.ACCEPT))
                    .build());
        } else if (w.length == 4 && w[0].equals("-D") && w[2].equals("-j") && w[3].equals(XtablesForward.CHAIN)) {
            Deque<Long> handles = jumps.get(w[1]);
            if (handles == null || handles.isEmpty()) {
                throw new GatunException("no rule '-A " + w[1] + " -j " + XtablesForward.CHAIN + "' left to delete in "
                        + family.keyword() + " filter");
            }
            tx.delete(new Rule(family, "filter", w[1], List.of(), null, handles.removeFirst()));
        } else if (w.length == 5 && w[0].equals("-I") && w[2].equals("1") && w[3].equals("-j")
                && w[4].equals(XtablesForward.CHAIN)) {
            tx.insert(Rule.in(table(), w[1]).raw(new Counter(0, 0), new VerdictExpr(Verdict.jump(XtablesForward.CHAIN)))
                    .build());
        } else {
            throw new IllegalArgumentException("not a line gatun writes to a filter table: " + line);
        }
    }
}
