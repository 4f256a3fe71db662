package dev.gatun.nft;

import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.DumpInterruptedException;
import dev.gatun.netlink.NftBatch;
import dev.gatun.netlink.NftChannel;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

import static dev.gatun.bindings.internal.libnftnl_h.*;

/**
 * nftables in one network namespace: transactions, the generation id, and reading the ruleset
 * back into the model. Not thread-safe; use one per thread, or guard it.
 */
public final class Nftables implements AutoCloseable {

    private final NftChannel channel;

    private Nftables(NftChannel channel) {
        this.channel = channel;
    }

    public static Nftables open(NetworkNamespace namespace) {
        return new Nftables(NftChannel.open(namespace));
    }

    public NetworkNamespace namespace() {
        return channel.namespace();
    }

    public Transaction transaction() {
        return new Transaction(channel);
    }

    /** The ruleset generation; any commit changes it. */
    public int generation() {
        return channel.generation();
    }

    /** Reads every table of the namespace, with chains, sets, elements and rules. */
    public Ruleset list() {
        return read(null, true);
    }

    /** Reads one table with everything in it; an empty ruleset if the table does not exist. */
    public Ruleset list(Table table) {
        return read(table, true);
    }

    /**
     * Reads every table with its chains, sets and rules, but no set's elements: for a caller that
     * looks at the ruleset's shape, which a map of 100,000 elements would make a hundred times
     * dearer to read. {@link Ruleset#elementsOf} is empty for every set of the result.
     */
    public Ruleset listWithoutElements() {
        return read(null, false);
    }

    /** {@link #listWithoutElements()} of one table; an empty ruleset if the table does not exist. */
    public Ruleset listWithoutElements(Table table) {
        return read(table, false);
    }

    private Ruleset read(Table only, boolean withElements) {
        int family = only == null ? kernel_h.NFPROTO_UNSPEC : only.family().nfproto();
        String where = only == null ? "" : " of " + only.describe();
        List<Table> tables = channel.dump("list tables", kernel_h.NFT_MSG_GETTABLE, family, null, TableCodec::read)
                .stream().filter(t -> only == null || t.name().equals(only.name())).toList();
        if (tables.isEmpty()) {
            return new Ruleset(List.of(), List.of(), List.of(), Map.of(), List.of());
        }
        List<Chain> chains = channel.dump("list chains" + where, kernel_h.NFT_MSG_GETCHAIN, family,
                only == null ? null : chainsOf(only), ChainCodec::read);
        List<NftSet> sets = channel.dump("list sets" + where, kernel_h.NFT_MSG_GETSET, family,
                only == null ? null : setsOf(only),
                m -> SetCodec.isAnonymous(m) ? null : SetCodec.read(m));
        Map<String, List<Element>> elements = new HashMap<>();
        if (withElements) {
            for (NftSet s : sets) {
                elements.put(Ruleset.key(s), elements(s));
            }
        }
        List<Rule> rules = channel.dump("list rules" + where, kernel_h.NFT_MSG_GETRULE, family,
                only == null ? null : rulesOf(only), RuleCodec::read);
        if (only != null) {
            chains = chains.stream().filter(c -> c.table().equals(only.name())).toList();
            sets = sets.stream().filter(s -> s.table().equals(only.name())).toList();
            rules = rules.stream().filter(r -> r.table().equals(only.name())).toList();
        }
        return new Ruleset(tables, chains, sets, elements, rules);
    }

    /**
     * The elements of one set or map. A dump comes in parts, and the kernel resumes a hash set's
     * walk by position; if the table is resized between parts (as it is after a large insert),
     * an element can come twice and another not at all. A key seen twice proves that, and the
     * dump is read again.
     */
    public List<Element> elements(NftSet set) {
        return ElementValues.decode(set, dumpElements(set));
    }

    /** {@link #elements(NftSet)} as the kernel keeps them, without rendering them into words. */
    public List<StoredElement> storedElements(NftSet set) {
        return dumpElements(set).stream().map(ElementCodec.Encoded::stored).toList();
    }

    private List<ElementCodec.Encoded> dumpElements(NftSet set) {
        return consistently(set, () -> {
            List<ElementCodec.Encoded> stored = new ArrayList<>();
            dumpElements(set, stored::add);
            return ElementCodec.hasDistinctKeys(stored) ? stored : null;
        });
    }

    /**
     * The keys of a set or map that is not an interval set, as the kernel keeps them, held in
     * one {@link KeySet}: nothing is kept per element but its key's bytes. Read as consistently
     * as {@link #elements(NftSet)}.
     */
    public KeySet storedKeys(NftSet set) {
        if (set.flags().contains(SetFlag.INTERVAL)) {
            throw new InvalidInputException(set.describe() + " is an interval set: read its elements in nft's words");
        }
        return consistently(set, () -> {
            KeySet keys = new KeySet(set.keyLength());
            boolean[] repeated = {false};
            dumpElements(set, e -> repeated[0] |= !keys.add(e.key()));
            return repeated[0] ? null : keys;
        });
    }

    private void dumpElements(NftSet set, Consumer<ElementCodec.Encoded> each) {
        channel.dump("list elements of " + set.describe(), kernel_h.NFT_MSG_GETSETELEM, set.family().nfproto(),
                nlh -> ElementCodec.write(nlh, set, 0, List.of()), m -> {
                    ElementCodec.read(m).forEach(each);
                    return null;
                });
    }

    /** Runs {@code dump} until it returns non-null, which it does unless the kernel's dump repeated a key. */
    private static <T> T consistently(NftSet set, Supplier<T> dump) {
        for (int attempt = 1; ; attempt++) {
            T read = dump.get();
            if (read != null) {
                return read;
            }
            if (attempt == CONSISTENT_DUMP_ATTEMPTS) {
                throw new DumpInterruptedException("list elements of " + set.describe(), "the kernel's dump "
                        + "repeated elements " + CONSISTENT_DUMP_ATTEMPTS + " times in a row while the set was changing");
            }
            try {
                Thread.sleep(10L * attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new GatunException("interrupted while listing " + set.describe(), e);
            }
        }
    }

    private static final int CONSISTENT_DUMP_ATTEMPTS = 20;

    /** One key to look up in one set, for {@link #elements(List)}. */
    public record Lookup(NftSet set, Element key) {}

    /** Looks many keys up at once (one datagram there, one back); each result as {@link #element}'s. */
    public List<Optional<Element>> elements(List<Lookup> lookups) {
        List<NftSet> sets = new ArrayList<>(lookups.size());
        List<ElementCodec.Encoded> keys = new ArrayList<>(lookups.size());
        for (Lookup l : lookups) {
            sets.add(l.set());
            keys.add(ElementValues.encode(l.set(), List.of(l.key()), true).getFirst());
        }
        NftChannel.AtGeneration<List<ElementCodec.Encoded>> answers = lookUp(sets, keys, false);
        List<Optional<Element>> out = new ArrayList<>(lookups.size());
        for (int i = 0; i < lookups.size(); i++) {
            NftSet set = sets.get(i);
            out.add(answers.found().get(i).flatMap(e -> ElementValues.decode(set, e).stream().findFirst()));
        }
        return out;
    }

    /** One key, as the kernel keeps it, to look up in one set. */
    public record StoredLookup(NftSet set, byte[] key) {}

    /** What {@link #storedAtGeneration} found, and the generation it was read at. */
    public record StoredFound(int generation, List<Optional<StoredElement>> found) {}

    /**
     * Looks keys up as the kernel keeps them (nothing parsed or rendered), together with the
     * ruleset generation in the same datagram: a transaction guarded by that generation fails
     * if anything changed after the reading.
     */
    public StoredFound storedAtGeneration(List<StoredLookup> lookups) {
        List<NftSet> sets = new ArrayList<>(lookups.size());
        List<ElementCodec.Encoded> keys = new ArrayList<>(lookups.size());
        for (StoredLookup l : lookups) {
            sets.add(l.set());
            keys.add(ElementValues.storedKey(l.set(), l.key()));
        }
        NftChannel.AtGeneration<List<ElementCodec.Encoded>> answers = lookUp(sets, keys, true);
        List<Optional<StoredElement>> out = new ArrayList<>(lookups.size());
        for (Optional<List<ElementCodec.Encoded>> e : answers.found()) {
            out.add(e.flatMap(all -> all.isEmpty() ? Optional.empty() : Optional.of(all.getFirst().stored())));
        }
        return new StoredFound(answers.generation(), out);
    }

    /** Sends one GETSETELEM per key in one datagram (after GETGEN if asked); empty where the kernel has none. */
    private NftChannel.AtGeneration<List<ElementCodec.Encoded>> lookUp(List<NftSet> sets,
                                                                       List<ElementCodec.Encoded> keys,
                                                                       boolean withGeneration) {
        NftChannel.Requests requests = new NftChannel.Requests() {
            @Override
            public int count() {
                return keys.size();
            }

            @Override
            public int family(int index) {
                return sets.get(index).family().nfproto();
            }

            @Override
            public void write(int index, MemorySegment message) {
                ElementCodec.write(message, sets.get(index), 0, List.of(keys.get(index)));
            }
        };
        NftChannel.Decoder<List<ElementCodec.Encoded>> decode = (i, m) -> ElementCodec.read(m);
        return withGeneration
                ? channel.getAllAtGeneration("look up elements", kernel_h.NFT_MSG_GETSETELEM, requests, decode)
                : new NftChannel.AtGeneration<>(0, channel.getAll("look up elements", kernel_h.NFT_MSG_GETSETELEM,
                        requests, decode));
    }

    /** The one element with this key, as the kernel has it, or empty. */
    public Optional<Element> element(NftSet set, Element key) {
        return elements(List.of(new Lookup(set, key))).getFirst();
    }

    /** A dump request payload that names only the table, so the kernel lists that table's objects. */
    private static NftBatch.PayloadWriter chainsOf(Table t) {
        return nlh -> {
            MemorySegment c = nftnl_chain_alloc();
            try (Arena arena = Arena.ofConfined()) {
                nftnl_chain_set_str(c, (short) NFTNL_CHAIN_TABLE, arena.allocateFrom(t.name()));
                nftnl_chain_nlmsg_build_payload(nlh, c);
            } finally {
                nftnl_chain_free(c);
            }
        };
    }

    private static NftBatch.PayloadWriter setsOf(Table t) {
        return nlh -> {
            MemorySegment s = nftnl_set_alloc();
            try (Arena arena = Arena.ofConfined()) {
                nftnl_set_set_str(s, (short) NFTNL_SET_TABLE, arena.allocateFrom(t.name()));
                nftnl_set_nlmsg_build_payload(nlh, s);
            } finally {
                nftnl_set_free(s);
            }
        };
    }

    private static NftBatch.PayloadWriter rulesOf(Table t) {
        return nlh -> {
            MemorySegment r = nftnl_rule_alloc();
            try (Arena arena = Arena.ofConfined()) {
                nftnl_rule_set_str(r, (short) NFTNL_RULE_TABLE, arena.allocateFrom(t.name()));
                nftnl_rule_nlmsg_build_payload(nlh, r);
            } finally {
                nftnl_rule_free(r);
            }
        };
    }

    @Override
    public void close() {
        channel.close();
    }
}
