package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NftBatch;
import dev.gatun.netlink.NftChannel;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Changes to nftables that the kernel applies all together or not at all. Collect operations,
 * then {@link #commit()}: one batch, one round trip. A transaction is used once.
 *
 * <p>"add" leaves an existing object as it is (elements and rules too: an existing element is
 * kept), "create" fails with EEXIST if it exists, "delete" fails with ENOENT if it does not,
 * "destroy" deletes only if it exists. A destroy is an add and a delete in the same batch
 * (as knftables does where the kernel has no DESTROY messages), so it reads nothing and cannot
 * race: whatever the object's state when the kernel applies the batch, it is gone after. The
 * kernel's own NFT_MSG_DESTROY* (Linux 6.3) would save the add, but the uAPI headers the
 * bindings are generated from here predate them.
 */
public final class Transaction {

    /** The result of one operation; {@code handle} is the kernel's handle when echo was asked for, else 0. */
    public static final class OperationResult {
        private final Supplier<String> operation;
        private final long handle;

        OperationResult(Supplier<String> operation, long handle) {
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

    /**
     * One message to send; its name is made only when an error or a caller asks for it. A
     * {@code part} is the first message of an operation of two (a destroy's add): it has no
     * result of its own.
     */
    private record Pending(Supplier<String> operation, int type, int family, int flags,
                           NftBatch.PayloadWriter payload, boolean part) {
        Pending(String operation, int type, int family, int flags, NftBatch.PayloadWriter payload) {
            this(() -> operation, type, family, flags, payload, false);
        }
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

    /**
     * Deletes the table with everything in it if it exists. Sent as an add of the bare name
     * (which leaves an existing table's flags alone) and a delete.
     */
    public Transaction destroy(Table t) {
        NftBatch.PayloadWriter name = nlh -> TableCodec.write(nlh, t, true);
        return destroy("destroy " + t.describe(), t.family(), kernel_h.NFT_MSG_NEWTABLE, 0, name,
                kernel_h.NFT_MSG_DELTABLE, name);
    }

    /** Queues {@code add} (a part without a result) and then {@code delete}, both named {@code operation}. */
    private Transaction destroy(String operation, Family family, int addType, int addFlags, NftBatch.PayloadWriter add,
                                int deleteType, NftBatch.PayloadWriter delete) {
        add(new Pending(() -> operation, addType, family.nfproto(), addFlags, add, true));
        return add(new Pending(operation, deleteType, family.nfproto(), 0, delete));
    }

    private Transaction table(String verb, Table t, int type, int flags) {
        boolean delete = type == kernel_h.NFT_MSG_DELTABLE;
        return add(new Pending(verb + " " + t.describe(), type, t.family().nfproto(), flags,
                nlh -> TableCodec.write(nlh, t, delete)));
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

    /**
     * Deletes the chain if it exists (it must have no rules, as for a delete). Sent as an add
     * of the bare name (which leaves an existing base chain's hook alone) and a delete, so its
     * table must exist: else the commit fails with ENOENT.
     */
    public Transaction destroy(Chain c) {
        NftBatch.PayloadWriter name = nlh -> ChainCodec.write(nlh, c, true);
        return destroy("destroy " + c.describe(), c.family(), kernel_h.NFT_MSG_NEWCHAIN, kernel_h.NLM_F_CREATE, name,
                kernel_h.NFT_MSG_DELCHAIN, name);
    }

    /** Removes every rule of the chain. */
    public Transaction flush(Chain c) {
        return add(new Pending("flush " + c.describe(), kernel_h.NFT_MSG_DELRULE, c.family().nfproto(), 0,
                nlh -> RuleCodec.write(nlh, new Rule(c.family(), c.table(), c.name(), List.of(), null, 0), false)));
    }

    private Transaction chain(String verb, Chain c, int type, int flags) {
        boolean delete = type == kernel_h.NFT_MSG_DELCHAIN;
        return add(new Pending(verb + " " + c.describe(), type, c.family().nfproto(), flags,
                nlh -> ChainCodec.write(nlh, c, delete)));
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
                nlh -> SetCodec.write(nlh, s, 0, true)));
    }

    /**
     * Deletes the set or map if it exists. Sent as an add of {@code s} as given and a delete:
     * its table must exist (else ENOENT), and a set of that name with another type or flags
     * makes the commit fail with EEXIST, as an add of it would.
     */
    public Transaction destroy(NftSet s) {
        // The kernel wants an id with every new set; one of its own, so no element or rule of this batch refers to it.
        int id = newSetIds.computeIfAbsent("destroy " + key(s), k -> newSetIds.size() + 1);
        return destroy("destroy " + s.describe(), s.family(), kernel_h.NFT_MSG_NEWSET, kernel_h.NLM_F_CREATE,
                nlh -> SetCodec.write(nlh, s, id, false), kernel_h.NFT_MSG_DELSET, nlh -> SetCodec.write(nlh, s, 0, true));
    }

    private Transaction set(String verb, NftSet s, int flags) {
        int id = newSetIds.computeIfAbsent(key(s), k -> newSetIds.size() + 1);
        return add(new Pending(verb + " " + s.describe(), kernel_h.NFT_MSG_NEWSET, s.family().nfproto(), flags,
                nlh -> SetCodec.write(nlh, s, id, false)));
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
                nlh -> ElementCodec.write(nlh, s, 0, List.of())));
    }

    /** Adds elements given as the kernel keeps them; ones that exist already are left as they are. */
    public Transaction addStored(NftSet s, List<StoredElement> elements) {
        return encoded("add", s, ElementValues.stored(s, elements, false), kernel_h.NFT_MSG_NEWSETELEM,
                kernel_h.NLM_F_CREATE);
    }

    /** Adds elements given as the kernel keeps them, failing with EEXIST if one's key is held already. */
    public Transaction createStored(NftSet s, List<StoredElement> elements) {
        return encoded("create", s, ElementValues.stored(s, elements, false), kernel_h.NFT_MSG_NEWSETELEM,
                kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL);
    }

    /** Deletes the elements with these keys (given as the kernel keeps them), failing with ENOENT if one is missing. */
    public Transaction deleteStored(NftSet s, List<StoredElement> elements) {
        return encoded("delete", s, ElementValues.stored(s, elements, true), kernel_h.NFT_MSG_DELSETELEM, 0);
    }

    private Transaction elements(String verb, NftSet s, List<Element> elements, int type, int flags) {
        return encoded(verb, s, ElementValues.encode(s, elements, type == kernel_h.NFT_MSG_DELSETELEM), type, flags);
    }

    private Transaction encoded(String verb, NftSet s, List<ElementCodec.Encoded> encoded, int type, int flags) {
        if (encoded.isEmpty()) {
            throw new InvalidInputException(verb + " elements of " + s.describe() + ": no elements given");
        }
        // Most transactions make no set: no key string to build for them.
        Integer id = newSetIds.isEmpty() ? null : newSetIds.get(key(s));
        for (List<ElementCodec.Encoded> chunk : ElementCodec.chunks(encoded)) {
            Supplier<String> op = () -> verb + " " + ElementCodec.describe(s, chunk)
                    + (type == kernel_h.NFT_MSG_DELSETELEM ? " from " : " in ") + s.describe();
            add(new Pending(op, type, s.family().nfproto(), flags,
                    nlh -> ElementCodec.write(nlh, s, id == null ? 0 : id, chunk), false));
        }
        return this;
    }

    // ------------------------------------------------------------------ rules

    /** Appends the rule to its chain. */
    public Transaction add(Rule r) {
        return add(new Pending("add " + r.describe(), kernel_h.NFT_MSG_NEWRULE, r.family().nfproto(),
                kernel_h.NLM_F_CREATE | kernel_h.NLM_F_APPEND,
                nlh -> RuleCodec.write(nlh, r, false,
                        set -> newSetIds.getOrDefault(r.family() + " " + r.table() + " " + set, 0))));
    }

    /** Puts the rule first in its chain (as {@code iptables -I CHAIN 1} does). */
    public Transaction insert(Rule r) {
        return add(new Pending("insert " + r.describe(), kernel_h.NFT_MSG_NEWRULE, r.family().nfproto(),
                kernel_h.NLM_F_CREATE,
                nlh -> RuleCodec.write(nlh, r, false,
                        set -> newSetIds.getOrDefault(r.family() + " " + r.table() + " " + set, 0))));
    }

    /** Deletes the rule with the rule's handle (as read back or reported by a commit). */
    public Transaction delete(Rule r) {
        if (r.handle() == 0) {
            throw new InvalidInputException("delete " + r.describe() + ": a rule is deleted by its handle, and this one has none");
        }
        return add(new Pending("delete " + r.describe() + " handle " + r.handle(), kernel_h.NFT_MSG_DELRULE,
                r.family().nfproto(), 0, nlh -> RuleCodec.write(nlh, r, true)));
    }

    // ------------------------------------------------------------------ commit

    private Transaction add(Pending p) {
        if (used) {
            throw new IllegalStateException("this transaction was already committed");
        }
        pending.add(p);
        return this;
    }

    /** The operations so far, as errors would name them (a destroy once, though it is two messages). */
    public List<String> operations() {
        return pending.stream().filter(p -> !p.part()).map(p -> p.operation().get()).toList();
    }

    /** Sends everything as one batch; throws, naming the first operation that failed, and nothing changed. */
    public List<OperationResult> commit() {
        if (used) {
            throw new IllegalStateException("this transaction was already committed");
        }
        used = true;
        long[] handles = new long[pending.size()];
        NftBatch batch = fill(channel.batch(), pending);
        channel.commit(batch, echo ? (index, message) -> {
            if (index >= 0 && index < handles.length && handles[index] == 0) {
                handles[index] = EchoedHandles.handle(pending.get(index).type, message);
            }
        } : null);
        List<OperationResult> results = new ArrayList<>();
        for (int i = 0; i < pending.size(); i++) {
            if (!pending.get(i).part()) {
                results.add(new OperationResult(pending.get(i).operation, handles[i]));
            }
        }
        return results;
    }

    private NftBatch fill(NftBatch batch, List<Pending> operations) {
        for (Pending p : operations) {
            int flags = p.flags | (echo && !p.part() && EchoedHandles.isEchoed(p.type) ? kernel_h.NLM_F_ECHO : 0);
            batch.add(p.operation, p.type, p.family, flags, p.payload);
        }
        if (guard != null) {
            batch.guardGeneration(guard);
        }
        return batch;
    }

    /** The messages this transaction would send, without sending them. */
    List<byte[]> encode() {
        try (NftBatch batch = new NftBatch()) {
            return fill(batch, pending).messageBytes();
        }
    }

    private static String key(NftSet s) {
        return s.family() + " " + s.table() + " " + s.name();
    }
}
