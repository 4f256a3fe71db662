package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nlattr;
import dev.gatun.bindings.internal.nlmsghdr;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Names the attribute the kernel rejected, from the byte offset its extended ACK gives
 * (NLMSGERR_ATTR_OFFS, counted from the start of the failing message) and the request as gatun
 * sent it: the kernel does not echo the request back (gatun asks for capped ACKs). Nested
 * attributes are named by their path, "NFTA_SET_ELEM_LIST_ELEMENTS (type 3) > NFTA_LIST_ELEM (type 1) #2".
 */
final class RejectedAttribute {

    private static final int HEADER = (int) nlattr.sizeof();

    private RejectedAttribute() {}

    /** The attribute at {@code offset} of {@code request} (one whole message), by type and, where known, name. */
    static String describe(NetlinkProtocol protocol, MemorySegment request, int offset) {
        String unplaced = "the attribute at byte " + offset + " of the request";
        if (request.byteSize() < NetlinkMessages.HEADER_BYTES) {
            return unplaced;
        }
        long end = Math.min(request.byteSize(), Integer.toUnsignedLong(nlmsghdr.nlmsg_len(request)));
        RequestLayouts.Layout layout = RequestLayouts.of(protocol, NetlinkMessages.type(request));
        if (layout == null) {
            return unplaced;
        }
        List<String> path = new ArrayList<>();
        AttributeSpace space = layout.attributes();
        long from = NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) layout.headerBytes());
        while (true) {
            long at = attributeHolding(request, from, end, offset);
            if (at < 0) {
                return path.isEmpty() ? unplaced : unplaced + ", inside " + String.join(" > ", path);
            }
            int type = type(request, at);
            path.add(step(request, from, end, at, type, space));
            if (at == offset) {
                return String.join(" > ", path);
            }
            // The offset lies inside this attribute's payload: it nests the one rejected.
            space = space == null ? null : space.inner(type);
            from = at + HEADER;
            end = at + length(request, at);
        }
    }

    /** The start of the attribute in [from, end) that begins at or holds {@code offset}; -1 when none does. */
    private static long attributeHolding(MemorySegment m, long from, long end, long offset) {
        for (long at = from; at + HEADER <= end; ) {
            int length = length(m, at);
            if (length < HEADER || at + length > end) {
                return -1;
            }
            if (offset >= at && offset < at + length) {
                return at;
            }
            at += NetlinkMessages.align(length);
        }
        return -1;
    }

    /** "NAME (type N)", and "#k" when the container holds more than one attribute of that type. */
    private static String step(MemorySegment m, long from, long end, long target, int type, AttributeSpace space) {
        int ordinal = 0;
        int count = 0;
        for (long at = from; at + HEADER <= end; ) {
            int length = length(m, at);
            if (length < HEADER || at + length > end) {
                break;
            }
            if (type(m, at) == type) {
                count++;
                if (at <= target) {
                    ordinal = count;
                }
            }
            at += NetlinkMessages.align(length);
        }
        String name = space == null ? null : space.name(type);
        String s = name == null ? "type " + type : name + " (type " + type + ")";
        return count > 1 ? s + " #" + ordinal : s;
    }

    private static int length(MemorySegment m, long at) {
        return Short.toUnsignedInt(nlattr.nla_len(m.asSlice(at, HEADER)));
    }

    private static int type(MemorySegment m, long at) {
        return Short.toUnsignedInt(nlattr.nla_type(m.asSlice(at, HEADER))) & kernel_h.NLA_TYPE_MASK;
    }
}
