package dev.gatun.nft;

import dev.gatun.bindings.internal.nfgenmsg;
import dev.gatun.bindings.internal.nlattr;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netlink.MalformedReplyException;
import dev.gatun.netlink.NetlinkMessages;

import java.lang.foreign.MemorySegment;
import java.util.Map;

import static dev.gatun.bindings.internal.kernel_h.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.util.Map.entry;

/**
 * Checks an nftables message from the kernel before libnftnl parses it. libnftnl trusts its
 * input: an attribute of the wrong size makes it end the whole process (abi_breakage() calls
 * exit), a string without its NUL is read past its end (strdup), an expression without a name
 * is a NULL dereference, and more than {@value #CONCAT_FIELDS} concatenated fields in a set's
 * description write past an array. Each check here is what libnftnl 1.2.4 asks of the
 * attribute it reads (mnl_attr_validate in its parse callbacks), made strict where libnftnl
 * is not: a string holds its NUL, an attribute fits in what contains it. A message that fails
 * is a {@link MalformedReplyException} naming the attribute.
 */
final class NftReplyCheck {

    /** The kinds libmnl validates against, plus the nested shapes libnftnl parses further. */
    enum Kind {
        U8, U16, U32, U64, STRING, NUL_STRING, NESTED, BINARY, FLAG,
        /** A data register: NFTA_DATA_VALUE or NFTA_DATA_VERDICT (nftnl_parse_data). */
        DATA,
        /** One expression: NFTA_EXPR_NAME and NFTA_EXPR_DATA (nftnl_expr_parse). */
        EXPRESSION,
        /** A list of NFTA_LIST_ELEM, each an expression. */
        EXPRESSIONS
    }

    /** What an attribute must be: a kind, or a nest whose attributes have their own policy. */
    private sealed interface Attr permits Leaf, Nest {}

    private record Leaf(Kind kind) implements Attr {}

    /**
     * A nest of at most {@code maxCount} attributes; types from {@code unsafeFrom} to
     * {@code unsafeTo} are refused (none when {@code unsafeFrom > unsafeTo}).
     */
    private record Nest(Map<Integer, Attr> inside, int maxCount, int unsafeFrom, int unsafeTo) implements Attr {
        Nest(Map<Integer, Attr> inside) {
            this(inside, Integer.MAX_VALUE, 1, 0);
        }

        Nest(Map<Integer, Attr> inside, int maxCount) {
            this(inside, maxCount, 1, 0);
        }
    }

    /** libnftnl keeps a set's concatenated field lengths in an array of NFT_REG32_COUNT. */
    static final int CONCAT_FIELDS = NFT_REG32_COUNT;

    private static Leaf leaf(Kind kind) {
        return new Leaf(kind);
    }

    private static final Map<Integer, Attr> TABLE = Map.of(
            NFTA_TABLE_NAME, leaf(Kind.STRING),
            NFTA_TABLE_HANDLE, leaf(Kind.U64),
            NFTA_TABLE_FLAGS, leaf(Kind.U32),
            NFTA_TABLE_USE, leaf(Kind.U32),
            NFTA_TABLE_OWNER, leaf(Kind.U32),
            NFTA_TABLE_USERDATA, leaf(Kind.BINARY));

    private static final Map<Integer, Attr> CHAIN = Map.ofEntries(
            entry(NFTA_CHAIN_NAME, leaf(Kind.STRING)),
            entry(NFTA_CHAIN_TABLE, leaf(Kind.STRING)),
            entry(NFTA_CHAIN_TYPE, leaf(Kind.STRING)),
            entry(NFTA_CHAIN_HOOK, new Nest(Map.of(
                    NFTA_HOOK_HOOKNUM, leaf(Kind.U32),
                    NFTA_HOOK_PRIORITY, leaf(Kind.U32),
                    NFTA_HOOK_DEV, leaf(Kind.STRING),
                    NFTA_HOOK_DEVS, new Nest(Map.of(NFTA_DEVICE_NAME, leaf(Kind.STRING)))))),
            entry(NFTA_CHAIN_COUNTERS, new Nest(Map.of(
                    NFTA_COUNTER_BYTES, leaf(Kind.U64),
                    NFTA_COUNTER_PACKETS, leaf(Kind.U64)))),
            entry(NFTA_CHAIN_POLICY, leaf(Kind.U32)),
            entry(NFTA_CHAIN_USE, leaf(Kind.U32)),
            entry(NFTA_CHAIN_FLAGS, leaf(Kind.U32)),
            entry(NFTA_CHAIN_ID, leaf(Kind.U32)),
            entry(NFTA_CHAIN_HANDLE, leaf(Kind.U64)),
            entry(NFTA_CHAIN_USERDATA, leaf(Kind.BINARY)));

    private static final Map<Integer, Attr> RULE = Map.of(
            NFTA_RULE_TABLE, leaf(Kind.STRING),
            NFTA_RULE_CHAIN, leaf(Kind.STRING),
            NFTA_RULE_HANDLE, leaf(Kind.U64),
            NFTA_RULE_EXPRESSIONS, leaf(Kind.EXPRESSIONS),
            NFTA_RULE_COMPAT, new Nest(Map.of(
                    NFTA_RULE_COMPAT_PROTO, leaf(Kind.U32),
                    NFTA_RULE_COMPAT_FLAGS, leaf(Kind.U32))),
            NFTA_RULE_POSITION, leaf(Kind.U64),
            NFTA_RULE_USERDATA, leaf(Kind.BINARY),
            NFTA_RULE_ID, leaf(Kind.U32),
            NFTA_RULE_POSITION_ID, leaf(Kind.U32));

    private static final Map<Integer, Attr> SET = Map.ofEntries(
            entry(NFTA_SET_TABLE, leaf(Kind.STRING)),
            entry(NFTA_SET_NAME, leaf(Kind.STRING)),
            entry(NFTA_SET_HANDLE, leaf(Kind.U64)),
            entry(NFTA_SET_FLAGS, leaf(Kind.U32)),
            entry(NFTA_SET_KEY_TYPE, leaf(Kind.U32)),
            entry(NFTA_SET_KEY_LEN, leaf(Kind.U32)),
            entry(NFTA_SET_DATA_TYPE, leaf(Kind.U32)),
            entry(NFTA_SET_DATA_LEN, leaf(Kind.U32)),
            entry(NFTA_SET_ID, leaf(Kind.U32)),
            entry(NFTA_SET_POLICY, leaf(Kind.U32)),
            entry(NFTA_SET_GC_INTERVAL, leaf(Kind.U32)),
            entry(NFTA_SET_USERDATA, leaf(Kind.BINARY)),
            entry(NFTA_SET_TIMEOUT, leaf(Kind.U64)),
            entry(NFTA_SET_DESC, new Nest(Map.of(
                    NFTA_SET_DESC_SIZE, leaf(Kind.U32),
                    NFTA_SET_DESC_CONCAT, new Nest(Map.of(NFTA_LIST_ELEM,
                            new Nest(Map.of(NFTA_SET_FIELD_LEN, leaf(Kind.U32)))), CONCAT_FIELDS)))),
            entry(NFTA_SET_EXPR, leaf(Kind.EXPRESSION)),
            entry(NFTA_SET_EXPRESSIONS, leaf(Kind.EXPRESSIONS)));

    private static final Map<Integer, Attr> ELEMENT = Map.of(
            NFTA_SET_ELEM_FLAGS, leaf(Kind.U32),
            NFTA_SET_ELEM_TIMEOUT, leaf(Kind.U64),
            NFTA_SET_ELEM_EXPIRATION, leaf(Kind.U64),
            NFTA_SET_ELEM_KEY, leaf(Kind.DATA),
            NFTA_SET_ELEM_KEY_END, leaf(Kind.DATA),
            NFTA_SET_ELEM_DATA, leaf(Kind.DATA),
            NFTA_SET_ELEM_EXPR, leaf(Kind.EXPRESSION),
            NFTA_SET_ELEM_EXPRESSIONS, leaf(Kind.EXPRESSIONS),
            NFTA_SET_ELEM_USERDATA, leaf(Kind.BINARY),
            NFTA_SET_ELEM_OBJREF, leaf(Kind.STRING));

    private static final Map<Integer, Attr> ELEMENTS = Map.of(
            NFTA_SET_ELEM_LIST_TABLE, leaf(Kind.STRING),
            NFTA_SET_ELEM_LIST_SET, leaf(Kind.STRING),
            NFTA_SET_ELEM_LIST_SET_ID, leaf(Kind.U32), // read unchecked by libnftnl
            NFTA_SET_ELEM_LIST_ELEMENTS, new Nest(Map.of(NFTA_LIST_ELEM,
                    // libnftnl's element callback takes types up to NFTA_SET_MAX into a table
                    // of NFTA_SET_ELEM_MAX + 1 entries on its stack: a type between would write past it.
                    new Nest(ELEMENT, Integer.MAX_VALUE, NFTA_SET_ELEM_MAX + 1, NFTA_SET_MAX))));

    private static final Map<Integer, Attr> DATA = Map.of(
            NFTA_DATA_VALUE, leaf(Kind.BINARY),
            NFTA_DATA_VERDICT, new Nest(Map.of(
                    NFTA_VERDICT_CODE, leaf(Kind.U32),
                    NFTA_VERDICT_CHAIN_ID, leaf(Kind.U32),
                    NFTA_VERDICT_CHAIN, leaf(Kind.STRING))));

    private static final Map<Integer, Attr> EXPRESSION = Map.of(
            NFTA_EXPR_NAME, leaf(Kind.STRING),
            NFTA_EXPR_DATA, leaf(Kind.NESTED));

    private NftReplyCheck() {}

    static void table(MemorySegment nlh) {
        check(nlh, TABLE, "table");
    }

    static void chain(MemorySegment nlh) {
        check(nlh, CHAIN, "chain");
    }

    static void rule(MemorySegment nlh) {
        check(nlh, RULE, "rule");
    }

    static void set(MemorySegment nlh) {
        check(nlh, SET, "set");
    }

    static void elements(MemorySegment nlh) {
        check(nlh, ELEMENTS, "set element");
    }

    /**
     * Checks that the message's own length lies within {@code nlh} (libnftnl reads up to it)
     * and holds the nfgenmsg, then every attribute against {@code policy}.
     */
    private static void check(MemorySegment nlh, Map<Integer, Attr> policy, String what) {
        long size = nlh.byteSize();
        if (size < NetlinkMessages.HEADER_BYTES) {
            throw new MalformedReplyException("a " + what + " message of " + size + " bytes has no netlink header");
        }
        long length = Integer.toUnsignedLong(nlmsghdr.nlmsg_len(nlh));
        long start = NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) nfgenmsg.sizeof());
        // libmnl reads attributes up to the claimed length rounded up to 4 bytes.
        long read = (length + 3) & ~3L;
        if (read > size || length < start) {
            throw new MalformedReplyException("a " + what + " message claims " + length + " bytes; it has " + size
                    + " and needs " + start + " for its headers");
        }
        attributes(nlh.asSlice(0, read), start, new Nest(policy), what);
    }

    private static void attributes(MemorySegment container, long offset, Nest nest, String where) {
        int[] count = {0};
        NetlinkMessages.forEachAttribute(container, offset, (type, payload) -> {
            if (++count[0] > nest.maxCount()) {
                throw new MalformedReplyException(where + " holds more than " + nest.maxCount() + " attributes");
            }
            if (type >= nest.unsafeFrom() && type <= nest.unsafeTo()) {
                throw new MalformedReplyException(where + " has an attribute of type " + type
                        + ", which libnftnl would store past the end of its table");
            }
            Attr a = nest.inside().get(type);
            String name = where + " attribute " + type;
            switch (a) {
                case null -> { }
                case Leaf l -> leaf(l.kind(), payload, name);
                case Nest n -> {
                    nested(payload, name);
                    attributes(payload, 0, n, name);
                }
            }
        });
    }

    private static void leaf(Kind kind, MemorySegment payload, String name) {
        long n = payload.byteSize();
        switch (kind) {
            case U8 -> size(n, 1, name);
            case U16 -> size(n, 2, name);
            case U32 -> size(n, 4, name);
            case U64 -> size(n, 8, name);
            case FLAG -> size(n, 0, name);
            case BINARY -> { }
            case STRING, NUL_STRING -> {
                if (n == 0 || payload.get(JAVA_BYTE, n - 1) != 0) {
                    throw new MalformedReplyException(name + " is a string of " + n + " bytes without its closing NUL");
                }
            }
            case NESTED -> nested(payload, name);
            case DATA -> {
                nested(payload, name);
                attributes(payload, 0, new Nest(DATA), name);
                boolean[] held = {false};
                NetlinkMessages.forEachAttribute(payload, 0, (type, p) -> {
                    if (type == NFTA_DATA_VERDICT) {
                        verdict(p, name);
                    }
                    held[0] |= type == NFTA_DATA_VALUE || type == NFTA_DATA_VERDICT;
                });
                if (!held[0]) {
                    // libnftnl then takes the kind of data from a variable it never set.
                    throw new MalformedReplyException(name + " holds neither a value nor a verdict");
                }
            }
            case EXPRESSION -> expression(payload, name);
            case EXPRESSIONS -> {
                nested(payload, name);
                NetlinkMessages.forEachAttribute(payload, 0, (type, element) -> {
                    if (type == NFTA_LIST_ELEM) {
                        expression(element, name + " element");
                    }
                });
            }
        }
    }

    /** An expression: a name (libnftnl dereferences it unchecked) and data checked by the named kind's policy. */
    private static void expression(MemorySegment payload, String where) {
        nested(payload, where);
        attributes(payload, 0, new Nest(EXPRESSION), where);
        MemorySegment[] name = {null};
        MemorySegment[] data = {null};
        NetlinkMessages.forEachAttribute(payload, 0, (type, p) -> {
            if (type == NFTA_EXPR_NAME) {
                name[0] = p;
            } else if (type == NFTA_EXPR_DATA) {
                data[0] = p;
            }
        });
        if (name[0] == null) {
            throw new MalformedReplyException(where + " is an expression without a name");
        }
        String kind = NetlinkMessages.string(name[0]);
        Map<Integer, Kind> policy = NftnlExpressionPolicy.BY_NAME.get(kind);
        if (data[0] == null || policy == null) {
            return; // libnftnl refuses a kind it does not know, and parse fails without harm
        }
        NetlinkMessages.forEachAttribute(data[0], 0, (type, p) -> {
            Kind k = policy.get(type);
            if (k != null) {
                leaf(k, p, where + " (" + kind + ") attribute " + type);
            }
        });
    }

    /**
     * A verdict holds its code, and a jump or goto its chain: libnftnl 1.2.4 looks both up in a
     * table it never cleared (nftnl_parse_verdict), so a missing one is a pointer read from
     * whatever its stack held.
     */
    private static void verdict(MemorySegment payload, String where) {
        Integer[] code = {null};
        boolean[] chain = {false};
        NetlinkMessages.forEachAttribute(payload, 0, (type, p) -> {
            if (type == NFTA_VERDICT_CODE) {
                code[0] = p.get(NetlinkMessages.NETWORK_INT, 0);
            } else if (type == NFTA_VERDICT_CHAIN) {
                chain[0] = true;
            }
        });
        if (code[0] == null) {
            throw new MalformedReplyException(where + " is a verdict without its code");
        }
        if ((code[0] == NFT_JUMP || code[0] == NFT_GOTO) && !chain[0]) {
            throw new MalformedReplyException(where + " is a jump or goto without its chain");
        }
    }

    /** libmnl's rule for a nest: empty, or at least one attribute header. */
    private static void nested(MemorySegment payload, String name) {
        long n = payload.byteSize();
        if (n != 0 && n < nlattr.sizeof()) {
            throw new MalformedReplyException(name + " is a nest of " + n + " bytes, less than one attribute");
        }
    }

    private static void size(long actual, int expected, String name) {
        if (actual != expected) {
            throw new MalformedReplyException(name + " holds " + actual + " bytes, not " + expected);
        }
    }
}
