package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.libnftnl_h;
import dev.gatun.bindings.internal.nfgenmsg;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.internal.NativeLibraries;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * An nfnetlink socket in one network namespace, for nf_tables: atomic batch commits, the
 * ruleset generation id, and dumps.
 */
public final class NftChannel implements AutoCloseable {

    private static final int REQUEST_BYTES = 64 * 1024;

    private final NetlinkSocket socket;
    /** Buffers reused by every request, like the socket itself one caller at a time. */
    private final Arena arena = Arena.ofShared();
    private final MemorySegment request;
    private NftBatch reusableBatch;
    /** The largest batch buffer kept for the next commit (a new batch's is 256 KiB). */
    private static final long KEPT_BATCH_BYTES = 1 << 20;

    private NftChannel(NetlinkSocket socket) {
        this.socket = socket;
        this.request = arena.allocate(REQUEST_BYTES, 8);
    }

    /**
     * An empty batch for the next commit; the same one each time, to keep its buffer, unless a
     * large commit made that grow (see {@link #commit(NftBatch, EchoListener)}).
     */
    public NftBatch batch() {
        if (reusableBatch == null) {
            reusableBatch = new NftBatch();
        }
        reusableBatch.reset();
        return reusableBatch;
    }

    public static NftChannel open(NetworkNamespace namespace) {
        NativeLibraries.requireNftables();
        return new NftChannel(NetlinkSocket.open(NetlinkProtocol.NETFILTER, namespace));
    }

    public NetworkNamespace namespace() {
        return socket.namespace();
    }

    /**
     * Commits the batch as one transaction: every message applies, or none does. On failure the
     * exception names the first failing operation; a stale generation guard gives a
     * {@link GenerationConflictException}.
     */
    public void commit(NftBatch batch) {
        commit(batch, null);
    }

    /** Receives a message the kernel echoed back for operation {@code index} of a batch (NLM_F_ECHO). */
    @FunctionalInterface
    public interface EchoListener {
        void echoed(int index, MemorySegment message);
    }

    /** Like {@link #commit(NftBatch)}, handing messages echoed for operations sent with NLM_F_ECHO to {@code echoes}. */
    public void commit(NftBatch batch, EchoListener echoes) {
        if (batch.size() == 0) {
            return;
        }
        Operations ops = batch.framedOperations();
        int first = socket.reserveSequences(ops.count());
        MemorySegment bytes = batch.frame(first);
        try {
            socket.transact(bytes, bytes.byteSize(), first, ops, NetlinkSocket.AckedRange.only(ops.count() - 2),
                    echoes == null ? null : m -> echoes.echoed(NetlinkMessages.sequence(m) - first - 1, m));
        } catch (NetlinkException e) {
            if (batch.guard() != null && e.errno() == libc_h.ERESTART) {
                throw new GenerationConflictException(ops.get(0), e.errno(), batch.guard());
            }
            throw e;
        } finally {
            // Publishing 50,000 ports grows the buffer to megabytes, which a long-running process
            // would keep for its lifetime: the next batch starts small again.
            if (batch == reusableBatch && batch.capacity() > KEPT_BATCH_BYTES) {
                reusableBatch.close();
                reusableBatch = null;
            }
        }
    }

    /** The current ruleset generation id (NFT_MSG_GETGEN); it changes with every commit. */
    public int generation() {
        return getAllAtGeneration("", kernel_h.NFT_MSG_GETGEN, Requests.NONE, (i, m) -> null).generation();
    }

    /**
     * Dumps objects of one kind: {@code type} is a GET message (for example NFT_MSG_GETTABLE);
     * each reply message goes to {@code decode}, whose non-null results are returned.
     */
    public <T> List<T> dump(String operation, int type, int family, Function<MemorySegment, T> decode) {
        return dump(operation, type, family, null, decode);
    }

    /** A dump whose request carries attributes (a filter such as the table), written by {@code filter}. */
    public <T> List<T> dump(String operation, int type, int family, NftBatch.PayloadWriter filter,
                            Function<MemorySegment, T> decode) {
        MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(request, (short) type, (short) family,
                (short) (kernel_h.NLM_F_DUMP | kernel_h.NLM_F_ACK), 0).reinterpret(REQUEST_BYTES);
        if (filter != null) {
            filter.write(nlh);
        }
        return socket.dump(nlh, NetlinkMessages.align(nlmsghdr.nlmsg_len(nlh)),
                operation, decode);
    }

    /** The GET requests of one {@link #getAll}: how many, and each one's family and payload. */
    public interface Requests {
        Requests NONE = new Requests() {
            @Override
            public int count() {
                return 0;
            }

            @Override
            public int family(int index) {
                throw new IndexOutOfBoundsException(index);
            }

            @Override
            public void write(int index, MemorySegment message) {
                throw new IndexOutOfBoundsException(index);
            }
        };

        int count();

        int family(int index);

        /** Writes request {@code index}'s payload after the header written for it. */
        void write(int index, MemorySegment message);
    }

    /** Turns the answer to request {@code index} into a result. */
    @FunctionalInterface
    public interface Decoder<T> {
        T decode(int index, MemorySegment reply);
    }

    /**
     * Asks for several objects at once, one datagram of GET requests (split when it would not
     * fit), and decodes each answer; an object that does not exist is an empty result.
     */
    public <T> List<Optional<T>> getAll(String operation, int type, Requests requests, Decoder<T> decode) {
        return getAll(operation, type, requests, decode, false).found();
    }

    /** What {@link #getAllAtGeneration} read, and the generation it was read at. */
    public record AtGeneration<T>(int generation, List<Optional<T>> found) {}

    /**
     * {@link #getAll} with NFT_MSG_GETGEN first in the same datagram: the kernel answers in
     * order, so the answers are at least as new as the generation, and a commit guarded by it
     * fails if anything changed after it. One round trip instead of two.
     */
    public <T> AtGeneration<T> getAllAtGeneration(String operation, int type, Requests requests, Decoder<T> decode) {
        return getAll(operation, type, requests, decode, true);
    }

    private <T> AtGeneration<T> getAll(String operation, int type, Requests requests, Decoder<T> decode,
                                       boolean withGeneration) {
        int total = requests.count();
        List<Optional<T>> out = new ArrayList<>(total);
        int[] generation = {0};
        boolean[] seen = {false};
        int from = 0;
        boolean generationPending = withGeneration;
        while (from < total || generationPending) {
            int lead = generationPending ? 1 : 0;
            int first = socket.reserveSequences(total - from + lead);
            long offset = 0;
            if (generationPending) {
                MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(request, (short) kernel_h.NFT_MSG_GETGEN,
                        (short) libc_h.AF_UNSPEC, (short) 0, first).reinterpret(REQUEST_BYTES);
                offset = NetlinkMessages.align(nlmsghdr.nlmsg_len(nlh));
            }
            int count = 0;
            while (from + count < total && REQUEST_BYTES - offset > 4096) {
                MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(request.asSlice(offset), (short) type,
                        (short) requests.family(from + count), (short) 0, first + lead + count)
                        .reinterpret(REQUEST_BYTES - offset);
                requests.write(from + count, nlh);
                offset += NetlinkMessages.align(nlmsghdr.nlmsg_len(nlh));
                count++;
            }
            Operations ops = new Operations(lead + count, i -> i < lead ? "read the ruleset generation" : operation);
            Object[] found = new Object[count];
            int base = from;
            socket.pipeline(request, offset, first, ops, (index, reply) -> {
                if (index < lead) {
                    seen[0] = parseGeneration(reply, generation);
                } else {
                    found[index - lead] = decode.decode(base + index - lead, reply);
                }
            }, libc_h.ENOENT);
            if (lead == 1 && !seen[0]) {
                throw new IllegalStateException("the kernel acknowledged GETGEN without sending the generation");
            }
            for (Object t : found) {
                @SuppressWarnings("unchecked")
                T decoded = (T) t;
                out.add(Optional.ofNullable(decoded));
            }
            from += count;
            generationPending = false;
        }
        return new AtGeneration<>(generation[0], out);
    }

    /**
     * Reads a GETGEN answer (NEWGEN) into {@code into[0]}; false if it is not one. The id is a
     * u32 in network order, so it may look negative. Read here rather than through libnftnl's
     * gen object: one attribute, and four fewer native calls on every publish.
     */
    static boolean parseGeneration(MemorySegment reply, int[] into) {
        if ((NetlinkMessages.type(reply) & 0xff) != kernel_h.NFT_MSG_NEWGEN) {
            return false;
        }
        boolean[] found = {false};
        NetlinkMessages.forEachAttribute(reply, NetlinkMessages.HEADER_BYTES + nfgenmsg.sizeof(), (type, payload) -> {
            if (type == kernel_h.NFTA_GEN_ID && payload.byteSize() == Integer.BYTES) {
                into[0] = payload.get(NetlinkMessages.NETWORK_INT, 0);
                found[0] = true;
            }
        });
        return found[0];
    }

    @Override
    public void close() {
        socket.close();
        if (reusableBatch != null) {
            reusableBatch.close();
        }
        arena.close();
    }
}
