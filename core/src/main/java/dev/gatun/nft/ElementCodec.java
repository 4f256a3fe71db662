package dev.gatun.nft;

import dev.gatun.nft.value.Verdict;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netlink.MalformedReplyException;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.nft.expr.Counter;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.gatun.bindings.internal.libmnl_h.*;
import static dev.gatun.bindings.internal.libnftnl_h.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Set elements as the kernel keeps them, into NEWSETELEM and DELSETELEM messages through
 * libnftnl (split so that each message stays under netlink's 64 KiB), and back from dumps.
 * {@link ElementValues} makes them from nft's words and turns them back into words.
 */
final class ElementCodec {

    /** Element list bytes per message: the list is one nested attribute with a 16-bit length. */
    static final int MAX_LIST_BYTES = 48 * 1024;

    /** The expression name libnftnl allocates a counter by, made once. */
    private static final MemorySegment COUNTER = Arena.global().allocateFrom("counter");

    /**
     * An element as the kernel stores it. {@code flags} holds NFT_SET_ELEM_INTERVAL_END;
     * {@code keyText} is the key in nft's words when it was given so (null when given as bytes).
     */
    record Encoded(byte[] key, int flags, byte[] data, Verdict verdict, Duration timeout, String comment, String keyText,
                   Counter counter) {

        Encoded(byte[] key, int flags, byte[] data, Verdict verdict, Duration timeout, String comment, String keyText) {
            this(key, flags, data, verdict, timeout, comment, keyText, null);
        }

        int estimatedBytes() {
            int n = 4 + attr(attr(key.length)) + attr(4);
            if (data != null) {
                n += attr(attr(data.length));
            }
            if (verdict != null) {
                n += attr(attr(attr(4) + (verdict.chain() == null ? 0 : attr(verdict.chain().length() + 1))));
            }
            if (timeout != null) {
                n += attr(8);
            }
            if (comment != null) {
                n += attr(comment.length() * 4 + 3);
            }
            if (counter != null) {
                // NFTA_SET_ELEM_EXPR: the name "counter" and two 64-bit counts.
                n += attr(attr(8) + attr(2 * attr(8)));
            }
            return n;
        }

        private static int attr(int payload) {
            return 4 + ((payload + 3) & ~3);
        }

        /** The key as errors name it: as given, or rendered from the bytes. */
        String label(NftSet set) {
            return keyText != null ? keyText : String.join(" . ", ElementValues.split(set.keyType(), key));
        }

        StoredElement stored() {
            return new StoredElement(key, data, comment, counter);
        }
    }

    private ElementCodec() {}

    /** How an operation on these elements names them: the first, and how many there are. */
    static String describe(NftSet s, List<Encoded> chunk) {
        String first = chunk.getFirst().label(s);
        if (chunk.size() == 1) {
            return "element " + first;
        }
        // An interval's start and end share a name: they count as one element.
        long distinct = chunk.stream().map(e -> e.keyText() != null ? e.keyText() : HexFormat.of().formatHex(e.key()))
                .distinct().count();
        return distinct == 1 ? "element " + first : distinct + " elements (" + first + ", ...)";
    }

    /** Splits elements into groups that each fit in one message. */
    static List<List<Encoded>> chunks(List<Encoded> elements) {
        List<List<Encoded>> out = new ArrayList<>();
        List<Encoded> current = new ArrayList<>();
        int bytes = 0;
        for (Encoded e : elements) {
            int n = e.estimatedBytes();
            if (!current.isEmpty() && bytes + n > MAX_LIST_BYTES) {
                out.add(current);
                current = new ArrayList<>();
                bytes = 0;
            }
            current.add(e);
            bytes += n;
        }
        if (!current.isEmpty()) {
            out.add(current);
        }
        return out;
    }

    /**
     * Writes a NEWSETELEM/DELSETELEM payload for one chunk, in nft's attribute order: table, set,
     * set id, then the element list, each element encoded by libnftnl.
     */
    static void write(MemorySegment nlh, NftSet set, int setTransactionId, List<Encoded> chunk) {
        NetlinkMessages.appendString(nlh, kernel_h.NFTA_SET_ELEM_LIST_TABLE, set.table());
        NetlinkMessages.appendString(nlh, kernel_h.NFTA_SET_ELEM_LIST_SET, set.name());
        if (setTransactionId > 0) {
            mnl_attr_put_u32(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_SET_ID, Native.bigEndian(setTransactionId));
        }
        if (chunk.isEmpty()) {
            return;
        }
        MemorySegment list = mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_ELEMENTS);
        int position = 0;
        // The elements of one owner share one comment: its user data is made once.
        String comment = null;
        byte[] userData = null;
        for (Encoded e : chunk) {
            if (e.comment() != null && !e.comment().equals(comment)) {
                comment = e.comment();
                userData = new Udata().putString(NFTNL_UDATA_SET_ELEM_COMMENT, comment).bytes();
            }
            MemorySegment el = element(staging(nlh), e, e.comment() == null ? null : userData);
            try {
                // Like libnftnl and nft, each element's nest is numbered by its position.
                MemorySegment item = mnl_attr_nest_start(nlh, (short) ++position);
                nftnl_set_elem_nlmsg_build_payload(nlh, el);
                mnl_attr_nest_end(nlh, item);
            } finally {
                nftnl_set_elem_free(el);
            }
        }
        mnl_attr_nest_end(nlh, list);
    }

    /**
     * Where an element's values wait for libnftnl: the free room right after the message so far.
     * libnftnl copies each value into its element object at once, before the element is written
     * there, so a publish allocates and frees no native memory for them. The caller's segment
     * bounds the room: a message without it fails its bounds check instead of overrunning.
     */
    private static MemorySegment staging(MemorySegment nlh) {
        return nlh.asSlice(NetlinkMessages.align(nlmsghdr.nlmsg_len(nlh)));
    }

    /** {@code userData}: the element's comment as libnftnl's user data, or null without one. */
    private static MemorySegment element(MemorySegment staging, Encoded e, byte[] userData) {
        MemorySegment el = nftnl_set_elem_alloc();
        try {
            fill(el, staging, e, userData);
        } catch (RuntimeException failed) {
            nftnl_set_elem_free(el);
            throw failed;
        }
        return el;
    }

    private static void fill(MemorySegment el, MemorySegment staging, Encoded e, byte[] userData) {
        if (e.flags() != 0) {
            nftnl_set_elem_set_u32(el, (short) NFTNL_SET_ELEM_FLAGS, e.flags());
        }
        nftnl_set_elem_set(el, (short) NFTNL_SET_ELEM_KEY, staged(staging, e.key()), e.key().length);
        if (e.data() != null) {
            nftnl_set_elem_set(el, (short) NFTNL_SET_ELEM_DATA, staged(staging, e.data()), e.data().length);
        }
        if (e.verdict() != null) {
            nftnl_set_elem_set_u32(el, (short) NFTNL_SET_ELEM_VERDICT, e.verdict().code().value());
            if (e.verdict().chain() != null) {
                staging.setString(0, e.verdict().chain());
                nftnl_set_elem_set_str(el, (short) NFTNL_SET_ELEM_CHAIN, staging);
            }
        }
        if (e.timeout() != null) {
            nftnl_set_elem_set_u64(el, (short) NFTNL_SET_ELEM_TIMEOUT, e.timeout().toMillis());
        }
        if (userData != null) {
            nftnl_set_elem_set(el, (short) NFTNL_SET_ELEM_USERDATA, staged(staging, userData), userData.length);
        }
        if (e.counter() != null) {
            MemorySegment counter = nftnl_expr_alloc(COUNTER);
            if (e.counter().packets() != 0 || e.counter().bytes() != 0) {
                nftnl_expr_set_u64(counter, (short) NFTNL_EXPR_CTR_PACKETS, e.counter().packets());
                nftnl_expr_set_u64(counter, (short) NFTNL_EXPR_CTR_BYTES, e.counter().bytes());
            }
            // The element owns it from here: nftnl_set_elem_free frees it.
            nftnl_set_elem_add_expr(el, counter);
        }
    }

    /** The counter an element read from the kernel carries, or null when it has none. */
    private static Counter counter(MemorySegment e, Arena arena) {
        if (nftnl_set_elem_is_set(e, (short) NFTNL_SET_ELEM_EXPR) == 0) {
            return null;
        }
        MemorySegment x = nftnl_set_elem_get(e, (short) NFTNL_SET_ELEM_EXPR, arena.allocate(JAVA_INT));
        if (x.equals(MemorySegment.NULL) || !"counter".equals(Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_NAME)))) {
            return null;
        }
        return new Counter(nftnl_expr_get_u64(x, (short) NFTNL_EXPR_CTR_PACKETS),
                nftnl_expr_get_u64(x, (short) NFTNL_EXPR_CTR_BYTES));
    }

    private static MemorySegment staged(MemorySegment staging, byte[] value) {
        MemorySegment.copy(value, 0, staging, JAVA_BYTE, 0, value.length);
        return staging;
    }

    /** The elements of one NEWSETELEM message of a dump, as the kernel stores them. */
    static List<Encoded> read(MemorySegment nlh) {
        MemorySegment s = nftnl_set_alloc();
        List<Encoded> out = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            NftReplyCheck.elements(nlh);
            if (nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
                throw new MalformedReplyException("libnftnl could not parse a set element message");
            }
            MemorySegment it = nftnl_set_elems_iter_create(s);
            try {
                for (MemorySegment el = nftnl_set_elems_iter_next(it); !el.equals(MemorySegment.NULL);
                     el = nftnl_set_elems_iter_next(it)) {
                    MemorySegment e = el;
                    byte[] key = Native.data(arena, len -> nftnl_set_elem_get(e, (short) NFTNL_SET_ELEM_KEY, len));
                    if (key == null) {
                        throw new MalformedReplyException("a set element of " + Native.string(nftnl_set_get_str(s,
                                (short) NFTNL_SET_NAME)) + " without a key");
                    }
                    int flags = nftnl_set_elem_is_set(e, (short) NFTNL_SET_ELEM_FLAGS) != 0
                            ? nftnl_set_elem_get_u32(e, (short) NFTNL_SET_ELEM_FLAGS) : 0;
                    byte[] data = nftnl_set_elem_is_set(e, (short) NFTNL_SET_ELEM_DATA) != 0
                            ? Native.data(arena, len -> nftnl_set_elem_get(e, (short) NFTNL_SET_ELEM_DATA, len)) : null;
                    Verdict verdict = null;
                    if (nftnl_set_elem_is_set(e, (short) NFTNL_SET_ELEM_VERDICT) != 0) {
                        Verdict.Code code = Verdict.Code.of(nftnl_set_elem_get_u32(e, (short) NFTNL_SET_ELEM_VERDICT));
                        String chain = nftnl_set_elem_is_set(e, (short) NFTNL_SET_ELEM_CHAIN) != 0
                                ? Native.string(nftnl_set_elem_get_str(e, (short) NFTNL_SET_ELEM_CHAIN)) : null;
                        verdict = new Verdict(code, chain);
                    }
                    Duration timeout = nftnl_set_elem_is_set(e, (short) NFTNL_SET_ELEM_TIMEOUT) != 0
                            ? Duration.ofMillis(nftnl_set_elem_get_u64(e, (short) NFTNL_SET_ELEM_TIMEOUT)) : null;
                    String comment = null;
                    if (nftnl_set_elem_is_set(e, (short) NFTNL_SET_ELEM_USERDATA) != 0) {
                        Map<Integer, byte[]> u = Udata.parse(Native.data(arena,
                                len -> nftnl_set_elem_get(e, (short) NFTNL_SET_ELEM_USERDATA, len)));
                        if (u.containsKey(NFTNL_UDATA_SET_ELEM_COMMENT)) {
                            comment = Udata.string(u.get(NFTNL_UDATA_SET_ELEM_COMMENT));
                        }
                    }
                    out.add(new Encoded(key, flags, data, verdict, timeout, comment, null, counter(e, arena)));
                }
            } finally {
                nftnl_set_elems_iter_destroy(it);
            }
        } finally {
            nftnl_set_free(s);
        }
        return out;
    }

    /** Whether no key appears twice (interval starts and ends count separately). */
    static boolean hasDistinctKeys(List<Encoded> stored) {
        Set<String> seen = new HashSet<>();
        for (Encoded e : stored) {
            if (!seen.add(HexFormat.of().formatHex(e.key()) + "/" + e.flags())) {
                return false;
            }
        }
        return true;
    }
}
