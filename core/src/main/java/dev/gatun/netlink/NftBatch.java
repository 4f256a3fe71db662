package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libnftnl_h;
import dev.gatun.bindings.internal.nfgenmsg;
import dev.gatun.bindings.internal.nlattr;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;


/**
 * The messages of one nftables transaction, framed by BATCH_BEGIN and BATCH_END so the kernel
 * applies all of them or none. Each message carries the name of its operation, which is what
 * an error reports. Build it on one thread at a time (libnftnl objects are not thread-safe),
 * then commit it with {@link NftChannel#commit}.
 */
public final class NftBatch implements AutoCloseable {

    /** No single message is larger: nested attribute lengths are 16-bit. */
    private static final int MESSAGE_HEADROOM = 128 * 1024;
    private static final int HEADER = (int) nlmsghdr.sizeof();
    private static final int BEGIN_BYTES = NetlinkMessages.align(HEADER + (int) nfgenmsg.sizeof());
    private static final int GENID_BYTES = NetlinkMessages.align((int) nlattr.sizeof() + 4);
    /** Messages start after room for a BATCH_BEGIN with its generation-id attribute. */
    private static final int FIRST_MESSAGE = BEGIN_BYTES + GENID_BYTES;

    /** Writes a message's payload (its attributes) after the header that the batch wrote. */
    @FunctionalInterface
    public interface PayloadWriter {
        void write(MemorySegment message);
    }

    private Arena arena = Arena.ofShared();
    private MemorySegment buffer;
    private long used = FIRST_MESSAGE;
    private final List<Supplier<String>> operations = new ArrayList<>();
    private final List<Long> offsets = new ArrayList<>();
    private Integer guardGeneration;

    public NftBatch() {
        NativeLibraries.requireNftables();
        buffer = arena.allocate(MESSAGE_HEADROOM * 2L, 8);
    }

    /** The bytes its native buffer holds now: it doubles when a batch needs more. */
    public long capacity() {
        return buffer.byteSize();
    }

    /** Empties the batch for reuse, keeping its buffer (allocating and zeroing one costs more than a small commit). */
    public void reset() {
        used = FIRST_MESSAGE;
        operations.clear();
        offsets.clear();
        guardGeneration = null;
    }

    /**
     * Appends one nf_tables message. {@code type} is an NFT_MSG_* value, {@code flags} the
     * NLM_F_* creation flags (NLM_F_REQUEST is added). {@code operation} is how errors name it,
     * for example "add table ip gatun".
     */
    public void add(String operation, int type, int family, int flags, PayloadWriter payload) {
        add(() -> operation, type, family, flags, payload);
    }

    /** {@link #add(String, int, int, int, PayloadWriter)} with the name made only if an error needs it. */
    public void add(Supplier<String> operation, int type, int family, int flags, PayloadWriter payload) {
        ensureRoom(MESSAGE_HEADROOM);
        MemorySegment at = buffer.asSlice(used);
        MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(at, (short) type, (short) family,
                (short) flags, 0).reinterpret(MESSAGE_HEADROOM);
        payload.write(nlh);
        int length = nlmsghdr.nlmsg_len(nlh);
        if (length > MESSAGE_HEADROOM) {
            throw new IllegalStateException(operation.get() + ": message of " + length + " bytes overran its buffer");
        }
        offsets.add(used);
        operations.add(operation);
        used += NetlinkMessages.align(length);
    }

    /**
     * Makes the commit conditional: the kernel refuses the whole batch with ERESTART (a
     * {@link GenerationConflictException}) if the ruleset generation is no longer this one.
     */
    public NftBatch guardGeneration(int generation) {
        this.guardGeneration = generation;
        return this;
    }

    public int size() {
        return operations.size();
    }

    public List<String> operations() {
        return operations.stream().map(Supplier::get).toList();
    }

    /** A copy of each message as it stands (sequence numbers are set at commit). */
    public List<byte[]> messageBytes() {
        List<byte[]> out = new ArrayList<>();
        for (long offset : offsets) {
            int length = nlmsghdr.nlmsg_len(buffer.asSlice(offset, HEADER));
            out.add(buffer.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
        }
        return out;
    }

    Integer guard() {
        return guardGeneration;
    }

    /**
     * Writes BEGIN (with the guard, if any) and END around the messages, numbers them from
     * {@code firstSequence} and returns the bytes to send: BEGIN has {@code firstSequence}.
     */
    MemorySegment frame(int firstSequence) {
        long start = guardGeneration == null ? GENID_BYTES : 0;
        MemorySegment begin = buffer.asSlice(start, FIRST_MESSAGE - start);
        libnftnl_h.nftnl_batch_begin(begin, firstSequence);
        if (guardGeneration != null) {
            MemorySegment attr = buffer.asSlice(BEGIN_BYTES, GENID_BYTES);
            nlattr.nla_len(attr, (short) (nlattr.sizeof() + 4));
            nlattr.nla_type(attr, (short) kernel_h.NFNL_BATCH_GENID);
            attr.set(NetlinkMessages.NETWORK_INT, nlattr.sizeof(), guardGeneration);
            nlmsghdr.nlmsg_len(begin, FIRST_MESSAGE);
        }
        for (int i = 0; i < offsets.size(); i++) {
            MemorySegment h = buffer.asSlice(offsets.get(i), HEADER);
            nlmsghdr.nlmsg_seq(h, firstSequence + 1 + i);
            // Only the last message asks for an ACK: failures are reported for every message
            // anyway, and 100,000 ACKs would overrun any receive buffer.
            int flags = Short.toUnsignedInt(nlmsghdr.nlmsg_flags(h)) & ~kernel_h.NLM_F_ACK;
            nlmsghdr.nlmsg_flags(h, (short) (i == offsets.size() - 1 ? flags | kernel_h.NLM_F_ACK : flags));
        }
        ensureRoom(BEGIN_BYTES);
        libnftnl_h.nftnl_batch_end(buffer.asSlice(used), firstSequence + 1 + offsets.size());
        return buffer.asSlice(start, used + BEGIN_BYTES - start);
    }

    /** The operation names, with the batch framing, indexed by sequence offset from BEGIN. */
    Operations framedOperations() {
        List<Supplier<String>> names = List.copyOf(operations);
        int n = names.size();
        return new Operations(n + 2, i -> {
            if (i == 0) {
                // A failure of BEGIN (no privilege, stale generation) stands for the whole transaction.
                return "commit " + names.get(0).get() + (n > 1 ? " and " + (n - 1) + " more operations" : "");
            }
            return i <= n ? names.get(i - 1).get() : "end transaction";
        });
    }

    private void ensureRoom(long bytes) {
        if (used + bytes <= buffer.byteSize()) {
            return;
        }
        Arena bigger = Arena.ofShared();
        MemorySegment grown = bigger.allocate(Math.max(buffer.byteSize() * 2, used + bytes), 8);
        MemorySegment.copy(buffer, 0, grown, 0, used);
        arena.close();
        arena = bigger;
        buffer = grown;
    }

    @Override
    public void close() {
        arena.close();
    }
}
