package dev.gatun.nft;

import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NftBatch;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.netlink.NftChannel;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Changes to nftables that the kernel applies all together or not at all. Collect operations,
 * then {@link #commit()}: one batch, one round trip. A transaction is used once.
 *
 * <p>"add" leaves an existing object as it is (elements and rules too: an existing element is
 * kept), "create" fails with EEXIST if it exists, "delete" fails with ENOENT if it does not,
 * "destroy" deletes only if it exists.
 */
public final class Transaction {

    /** The result of one operation; {@code handle} is the kernel's handle when echo was asked for, else 0. */
    public static final class OperationResult {
        private final java.util.function.Supplier<String> operation;
        private final long handle;

        OperationResult(java.util.function.Supplier<String> operation, long handle) {
            this.operation = operation;
            this.handle = handle;
        }

        /** How errors would name the operation, for example "add table ip gatun". */
        public String operation() {
            return operation.get();
        }

        public long handle() {
            return handle;
        }

        @Override
        public String toString() {
            return operation() + (handle != 0 ? " (handle " + handle + ")" : "");
        }
    }

    /** One message to send; its name is made only when an error or a caller asks for it. */
    private record Pending(java.util.function.Supplier<String> operation, int type, int family, int flags,
                           NftBatch.PayloadWriter payload, Existence onlyIfExists) {
        Pending(String operation, int type, int family, int flags, NftBatch.PayloadWriter payload,
                Existence onlyIfExists) {
            this(() -> operation, type, family, flags, payload, onlyIfExists);
        }
    }

    /** For destroy: asks the kernel whether the object is there before the batch is built. */
    @FunctionalInterface
    private interface Existence {
        boolean exists(NftChannel channel);
    }

    private final NftChannel channel;
    private final List<Pending> pending = new ArrayList<>();
    private final Map<String, Integer> newSetIds = new HashMap<>();
    private boolean echo;
    private Integer guard;
    private boolean used;

    Transaction(NftChannel channel) {
        this.channel = channel;
    }

    /** Asks the kernel to echo created objects, so {@link #commit()} reports their handles. */
    public Transaction withHandles() {
        this.echo = true;
        return this;
    }

    /** Commits only if the ruleset is still at this generation; else a GenerationConflictException. */
    public Transaction guardGeneration(int generation) {
        this.guard = generation;
        return this;
    }

    // ------------------------------------------------------------------ tables

    public Transaction add(Table t) {
        return table("add", t, kernel_h.NFT_MSG_NEWTABLE, 0);
    }

    public Transaction create(Table t) {
        return table("create", t, kernel_h.NFT_MSG_NEWTABLE, kernel_h.NLM_F_EXCL);
    }

    public Transaction delete(Table t) {
        return table("delete", t, kernel_h.NFT_MSG_DELTABLE, 0);
    }

    public Transaction destroy(Table t) {
        return add(new Pending("destroy " + t.describe(), kernel_h.NFT_MSG_DELTABLE, t.family().nfproto(), 0,
                nlh -> TableCodec.write(nlh, t, true),
                ch -> ch.get("look up " + t.describe(), kernel_h.NFT_MSG_GETTABLE, t.family().nfproto(),
                        nlh -> TableCodec.write(nlh, t, true), m -> true).isPresent()));
    }

    private Transaction table(String verb, Table t, int type, int flags) {
        boolean delete = type == kernel_h.NFT_MSG_DELTABLE;
        return add(new Pending(verb + " " + t.describe(), type, t.family().nfproto(), flags,
                nlh -> TableCodec.write(nlh, t, delete), null));
    }

    // ------------------------------------------------------------------ chains

    public Transaction add(Chain c) {
        return chain("add", c, kernel_h.NFT_MSG_NEWCHAIN, kernel_h.NLM_F_CREATE);
    }

    public Transaction create(Chain c) {
        return chain("create", c, kernel_h.NFT_MSG_NEWCHAIN, kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL);
    }

    public Transaction delete(Chain c) {
        return chain("delete", c, kernel_h.NFT_MSG_DELCHAIN, 0);
    }

    public Transaction destroy(Chain c) {
        return add(new Pending("destroy " + c.describe(), kernel_h.NFT_MSG_DELCHAIN, c.family().nfproto(), 0,
                nlh -> ChainCodec.write(nlh, c, true),
                ch -> ch.get("look up " + c.describe(), kernel_h.NFT_MSG_GETCHAIN, c.family().nfproto(),
                        nlh -> ChainCodec.write(nlh, c, true), m -> true).isPresent()));
    }

    /** Removes every rule of the chain. */
    public Transaction flush(Chain c) {
        return add(new Pending("flush " + c.describe(), kernel_h.NFT_MSG_DELRULE, c.family().nfproto(), 0,
                nlh -> RuleCodec.write(nlh, new Rule(c.family(), c.table(), c.name(), List.of(), null, 0), false), null));
    }

    private Transaction chain(String verb, Chain c, int type, int flags) {
        boolean delete = type == kernel_h.NFT_MSG_DELCHAIN;
        return add(new Pending(verb + " " + c.describe(), type, c.family().nfproto(), flags,
                nlh -> ChainCodec.write(nlh, c, delete), null));
    }

    // ------------------------------------------------------------------ sets and maps

    public Transaction add(NftSet s) {
        return set("add", s, kernel_h.NLM_F_CREATE);
    }

    public Transaction create(NftSet s) {
        return set("create", s, kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL);
    }

    public Transaction delete(NftSet s) {
        return add(new Pending("delete " + s.describe(), kernel_h.NFT_MSG_DELSET, s.family().nfproto(), 0,
                nlh -> SetCodec.write(nlh, s, 0, true), null));
    }

    public Transaction destroy(NftSet s) {
        return add(new Pending("destroy " + s.describe(), kernel_h.NFT_MSG_DELSET, s.family().nfproto(), 0,
                nlh -> SetCodec.write(nlh, s, 0, true),
                ch -> ch.get("look up " + s.describe(), kernel_h.NFT_MSG_GETSET, s.family().nfproto(),
                        nlh -> SetCodec.write(nlh, s, 0, true), m -> true).isPresent()));
    }

    private Transaction set(String verb, NftSet s, int flags) {
        int id = newSetIds.computeIfAbsent(key(s), k -> newSetIds.size() + 1);
        return add(new Pending(verb + " " + s.describe(), kernel_h.NFT_MSG_NEWSET, s.family().nfproto(), flags,
                nlh -> SetCodec.write(nlh, s, id, false), null));
    }

    // ------------------------------------------------------------------ elements

    /** Adds elements; ones that exist already are left as they are. */
    public Transaction addElements(NftSet s, List<Element> elements) {
        return elements("add", s, elements, kernel_h.NFT_MSG_NEWSETELEM, kernel_h.NLM_F_CREATE);
    }

    /** Adds elements, failing the whole transaction with EEXIST if one exists. */
    public Transaction createElements(NftSet s, List<Element> elements) {
        return elements("create", s, elements, kernel_h.NFT_MSG_NEWSETELEM, kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL);
    }

    /** Deletes elements, failing with ENOENT if one is missing. */
    public Transaction deleteElements(NftSet s, List<Element> elements) {
        return elements("delete", s, elements, kernel_h.NFT_MSG_DELSETELEM, 0);
    }

    /** Removes every element of the set. */
    public Transaction flush(NftSet s) {
        return add(new Pending("flush " + s.describe(), kernel_h.NFT_MSG_DELSETELEM, s.family().nfproto(), 0,
                nlh -> ElementCodec.write(nlh, s, 0, List.of()), null));
    }

    /** Adds elements given as the kernel keeps them; ones that exist already are left as they are. */
    public Transaction addStored(NftSet s, List<StoredElement> elements) {
        return encoded("add", s, ElementCodec.stored(s, elements, false), kernel_h.NFT_MSG_NEWSETELEM,
                kernel_h.NLM_F_CREATE);
    }

    /** Deletes the elements with these keys (given as the kernel keeps them), failing with ENOENT if one is missing. */
    public Transaction deleteStored(NftSet s, List<StoredElement> elements) {
        return encoded("delete", s, ElementCodec.stored(s, elements, true), kernel_h.NFT_MSG_DELSETELEM, 0);
    }

    private Transaction elements(String verb, NftSet s, List<Element> elements, int type, int flags) {
        return encoded(verb, s, ElementCodec.encode(s, elements, type == kernel_h.NFT_MSG_DELSETELEM), type, flags);
    }

    private Transaction encoded(String verb, NftSet s, List<ElementCodec.Encoded> encoded, int type, int flags) {
        if (encoded.isEmpty()) {
            throw new InvalidInputException(verb + " elements of " + s.describe() + ": no elements given");
        }
        // Most transactions make no set: no key string to build for them.
        Integer id = newSetIds.isEmpty() ? null : newSetIds.get(key(s));
        for (List<ElementCodec.Encoded> chunk : ElementCodec.chunks(encoded)) {
            java.util.function.Supplier<String> op = () -> verb + " " + describeElements(s, chunk)
                    + (type == kernel_h.NFT_MSG_DELSETELEM ? " from " : " in ") + s.describe();
            add(new Pending(op, type, s.family().nfproto(), flags,
                    nlh -> ElementCodec.write(nlh, s, id == null ? 0 : id, chunk), null));
        }
        return this;
    }

    private static String describeElements(NftSet s, List<ElementCodec.Encoded> chunk) {
        String first = chunk.getFirst().label(s);
        if (chunk.size() == 1) {
            return "element " + first;
        }
        // An interval's start and end share a name: they count as one element.
        long distinct = chunk.stream().map(e -> e.keyText() != null ? e.keyText() : java.util.HexFormat.of().formatHex(e.key()))
                .distinct().count();
        return distinct == 1 ? "element " + first : distinct + " elements (" + first + ", ...)";
    }

    // ------------------------------------------------------------------ rules

    /** Appends the rule to its chain. */
    public Transaction add(Rule r) {
        return add(new Pending("add " + r.describe(), kernel_h.NFT_MSG_NEWRULE, r.family().nfproto(),
                kernel_h.NLM_F_CREATE | kernel_h.NLM_F_APPEND,
                nlh -> RuleCodec.write(nlh, r, false,
                        set -> newSetIds.getOrDefault(r.family() + " " + r.table() + " " + set, 0)), null));
    }

    /** Deletes the rule with the rule's handle (as read back or reported by a commit). */
    public Transaction delete(Rule r) {
        if (r.handle() == 0) {
            throw new InvalidInputException("delete " + r.describe() + ": a rule is deleted by its handle, and this one has none");
        }
        return add(new Pending("delete " + r.describe() + " handle " + r.handle(), kernel_h.NFT_MSG_DELRULE,
                r.family().nfproto(), 0, nlh -> RuleCodec.write(nlh, r, true), null));
    }

    // ------------------------------------------------------------------ commit

    private Transaction add(Pending p) {
        if (used) {
            throw new IllegalStateException("this transaction was already committed");
        }
        pending.add(p);
        return this;
    }

    /** The operations so far, as errors would name them. */
    public List<String> operations() {
        return pending.stream().map(p -> p.operation().get()).toList();
    }

    /** Sends everything as one batch; throws, naming the first operation that failed, and nothing changed. */
    public List<OperationResult> commit() {
        if (used) {
            throw new IllegalStateException("this transaction was already committed");
        }
        used = true;
        List<Pending> sent = new ArrayList<>();
        for (Pending p : pending) {
            if (p.onlyIfExists == null || p.onlyIfExists.exists(channel)) {
                sent.add(p);
            }
        }
        long[] handles = new long[sent.size()];
        NftBatch batch = fill(channel.batch(), sent);
        channel.commit(batch, echo ? (index, message) -> {
            if (index >= 0 && index < handles.length && handles[index] == 0) {
                handles[index] = handleOf(sent.get(index).type, message);
            }
        } : null);
        List<OperationResult> results = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            results.add(new OperationResult(sent.get(i).operation, handles[i]));
        }
        return results;
    }

    private NftBatch fill(NftBatch batch, List<Pending> operations) {
        for (Pending p : operations) {
            int flags = p.flags | (echo && isNew(p.type) ? kernel_h.NLM_F_ECHO : 0);
            batch.add(p.operation, p.type, p.family, flags, p.payload);
        }
        if (guard != null) {
            batch.guardGeneration(guard);
        }
        return batch;
    }

    /** The messages this transaction would send, without sending them (destroys as deletes). */
    List<byte[]> encode() {
        try (NftBatch batch = new NftBatch()) {
            return fill(batch, pending).messageBytes();
        }
    }

    private static boolean isNew(int type) {
        return type == kernel_h.NFT_MSG_NEWTABLE || type == kernel_h.NFT_MSG_NEWCHAIN
                || type == kernel_h.NFT_MSG_NEWSET || type == kernel_h.NFT_MSG_NEWRULE;
    }

    private static long handleOf(int type, MemorySegment message) {
        // Other notifications (such as NEWGEN) share sequence numbers; libnftnl exits the
        // process on a message of the wrong kind, so only the echo of the request is parsed.
        if ((NetlinkMessages.type(message) & 0xff) != type) {
            return 0;
        }
        if (type == kernel_h.NFT_MSG_NEWTABLE) {
            return TableCodec.read(message).handle();
        }
        if (type == kernel_h.NFT_MSG_NEWCHAIN) {
            return ChainCodec.read(message).handle();
        }
        if (type == kernel_h.NFT_MSG_NEWSET) {
            return SetCodec.read(message).handle();
        }
        if (type == kernel_h.NFT_MSG_NEWRULE) {
            return RuleCodec.read(message).handle();
        }
        return 0;
    }

    private static String key(NftSet s) {
        return s.family() + " " + s.table() + " " + s.name();
    }
}
