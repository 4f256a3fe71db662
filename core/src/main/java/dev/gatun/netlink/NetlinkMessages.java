package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nlattr;
import dev.gatun.bindings.internal.nlmsgerr;
import dev.gatun.bindings.internal.nlmsghdr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.function.Consumer;

/** Walking netlink messages and attributes in a received buffer, with the kernel's layouts. */
public final class NetlinkMessages {

    public static final int HEADER_BYTES = (int) nlmsghdr.sizeof();
    /** A 32-bit attribute value in network order, as netlink families other than rtnetlink carry them. */
    public static final ValueLayout.OfInt NETWORK_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** A 16-bit value in network order, such as a port. */
    public static final ValueLayout.OfShort NETWORK_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final int ALIGN = kernel_h.NLMSG_ALIGNTO;

    private NetlinkMessages() {}

    public static int align(int length) {
        return (length + ALIGN - 1) & -ALIGN;
    }

    /**
     * Starts a request at the start of {@code buffer}: the netlink header, zeroed but for its length
     * so far, {@code type} and NLM_F_REQUEST | {@code flags} (the sequence number is the sender's).
     * Family headers and payload follow with {@link #append}, attributes with libmnl's writers.
     * Written here rather than with mnl_nlmsg_put_header and put_extra_header: two fewer C
     * signatures for a one-shot command to link (milliseconds each in a new JVM).
     */
    public static MemorySegment startRequest(MemorySegment buffer, int type, int flags) {
        buffer.asSlice(0, HEADER_BYTES).fill((byte) 0);
        nlmsghdr.nlmsg_len(buffer, HEADER_BYTES);
        nlmsghdr.nlmsg_type(buffer, (short) type);
        nlmsghdr.nlmsg_flags(buffer, (short) (kernel_h.NLM_F_REQUEST | flags));
        return buffer;
    }

    /** Reserves {@code bytes} at the end of the message {@code nlh}, zeroed with their padding, and returns them. */
    public static MemorySegment append(MemorySegment nlh, long bytes) {
        int length = nlmsghdr.nlmsg_len(nlh);
        int aligned = align((int) bytes);
        nlh.asSlice(length, aligned).fill((byte) 0);
        nlmsghdr.nlmsg_len(nlh, length + aligned);
        return nlh.asSlice(length, bytes);
    }

    /**
     * Appends a NUL-terminated string attribute to the message {@code nlh}, as libmnl's
     * mnl_attr_put_strz does, but from a Java string: no native copy of it to make and free, and
     * bounded by {@code nlh}'s size. The one writer of string attributes (nftables and rtnetlink
     * alike); the value is a name already checked to hold no NUL (where C would stop reading it).
     */
    public static void appendString(MemorySegment nlh, int type, String value) {
        byte[] bytes = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int header = (int) nlattr.sizeof();
        int length = header + bytes.length + 1;
        MemorySegment attribute = append(nlh, length);
        nlattr.nla_len(attribute, (short) length);
        nlattr.nla_type(attribute, (short) type);
        MemorySegment.copy(bytes, 0, attribute, ValueLayout.JAVA_BYTE, header, bytes.length);
    }

    /** Calls {@code each} with a slice for every whole message in the first {@code length} bytes. */
    public static void forEach(MemorySegment buffer, long length, Consumer<MemorySegment> each) {
        long offset = 0;
        while (offset + HEADER_BYTES <= length) {
            int len = nlmsghdr.nlmsg_len(buffer.asSlice(offset, HEADER_BYTES));
            if (len < HEADER_BYTES || offset + len > length) {
                throw new IllegalStateException("malformed netlink message at offset " + offset + " (length " + len + ")");
            }
            each.accept(buffer.asSlice(offset, len));
            offset += align(len);
        }
    }

    public static int type(MemorySegment message) {
        return Short.toUnsignedInt(nlmsghdr.nlmsg_type(message));
    }

    public static int flags(MemorySegment message) {
        return Short.toUnsignedInt(nlmsghdr.nlmsg_flags(message));
    }

    public static int sequence(MemorySegment message) {
        return nlmsghdr.nlmsg_seq(message);
    }

    /** For an NLMSG_ERROR message: the negative errno, or 0 for an acknowledgement. */
    public static int error(MemorySegment message) {
        return nlmsgerr.error(message.asSlice(HEADER_BYTES));
    }

    /** For an NLMSG_ERROR message: the sequence number of the request it answers. */
    public static int errorSequence(MemorySegment message) {
        return nlmsghdr.nlmsg_seq(nlmsgerr.msg(message.asSlice(HEADER_BYTES)));
    }

    /** The kernel's extended-ACK text of an NLMSG_ERROR message, or null. */
    public static String extendedAckMessage(MemorySegment message) {
        int flags = flags(message);
        if ((flags & kernel_h.NLM_F_ACK_TLVS) == 0) {
            return null;
        }
        MemorySegment err = message.asSlice(HEADER_BYTES);
        int echoed = (flags & kernel_h.NLM_F_CAPPED) != 0 ? HEADER_BYTES : align(nlmsghdr.nlmsg_len(nlmsgerr.msg(err)));
        long offset = HEADER_BYTES + nlmsgerr.msg$OFFSET + echoed;
        String[] found = {null};
        forEachAttribute(message, offset, (type, payload) -> {
            if (type == kernel_h.NLMSGERR_ATTR_MSG && found[0] == null) {
                found[0] = payload.getString(0);
            }
        });
        return found[0];
    }

    /** An attribute visitor: the type without flag bits, and the payload slice. */
    public interface AttributeVisitor {
        void visit(int type, MemorySegment payload);
    }

    /** Visits the attributes from {@code offset} to the end of {@code container}. */
    public static void forEachAttribute(MemorySegment container, long offset, AttributeVisitor visitor) {
        long end = container.byteSize();
        int header = (int) nlattr.sizeof();
        while (offset + header <= end) {
            MemorySegment a = container.asSlice(offset, header);
            int len = Short.toUnsignedInt(nlattr.nla_len(a));
            if (len < header || offset + len > end) {
                return;
            }
            int type = Short.toUnsignedInt(nlattr.nla_type(a)) & kernel_h.NLA_TYPE_MASK;
            visitor.visit(type, container.asSlice(offset + header, len - header));
            offset += align(len);
        }
    }
}
