package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nlattr;
import dev.gatun.bindings.internal.nlmsgerr;
import dev.gatun.bindings.internal.nlmsghdr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
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
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
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
                throw new MalformedReplyException("a netlink message at offset " + offset + " of a " + length
                        + "-byte datagram claims " + Integer.toUnsignedString(len) + " bytes");
            }
            each.accept(buffer.asSlice(offset, len));
            offset += align(len);
        }
    }

    public static int type(MemorySegment message) {
        return Short.toUnsignedInt(nlmsghdr.nlmsg_type(header(message)));
    }

    public static int flags(MemorySegment message) {
        return Short.toUnsignedInt(nlmsghdr.nlmsg_flags(header(message)));
    }

    public static int sequence(MemorySegment message) {
        return nlmsghdr.nlmsg_seq(header(message));
    }

    private static MemorySegment header(MemorySegment message) {
        if (message.byteSize() < HEADER_BYTES) {
            throw new MalformedReplyException("a netlink message of " + message.byteSize() + " bytes has no "
                    + HEADER_BYTES + "-byte header");
        }
        return message;
    }

    /**
     * The {@code bytes} after the netlink header of {@code message} (its family header, such as
     * an ifinfomsg), or a {@link MalformedReplyException} naming {@code what} when the message
     * is too short to hold them.
     */
    public static MemorySegment familyHeader(MemorySegment message, long bytes, String what) {
        if (message.byteSize() < HEADER_BYTES + bytes) {
            throw new MalformedReplyException("a " + message.byteSize() + "-byte " + what + " message is too short for its "
                    + (HEADER_BYTES + bytes) + "-byte headers");
        }
        return message.asSlice(HEADER_BYTES, bytes);
    }

    /** For an NLMSG_ERROR message: the negative errno, or 0 for an acknowledgement. */
    public static int error(MemorySegment message) {
        return nlmsgerr.error(familyHeader(message, ERROR_BYTES, "error"));
    }

    /** For an NLMSG_ERROR message: the sequence number of the request it answers. */
    public static int errorSequence(MemorySegment message) {
        return nlmsghdr.nlmsg_seq(nlmsgerr.msg(familyHeader(message, ERROR_BYTES, "error")));
    }

    /** An nlmsgerr as every error message carries it: the errno and at least the header of the request. */
    private static final long ERROR_BYTES = nlmsgerr.msg$OFFSET + HEADER_BYTES;

    /** A 4-byte attribute value in host order; a {@link MalformedReplyException} naming {@code what} when it is not 4 bytes. */
    public static int u32(MemorySegment payload, String what) {
        return sized(payload, Integer.BYTES, what).get(ValueLayout.JAVA_INT_UNALIGNED, 0);
    }

    /** A 4-byte attribute value in network order, as {@link #u32}. */
    public static int networkU32(MemorySegment payload, String what) {
        return sized(payload, Integer.BYTES, what).get(NETWORK_INT, 0);
    }

    /** A 2-byte attribute value in network order, as {@link #u32}. */
    public static int networkU16(MemorySegment payload, String what) {
        return Short.toUnsignedInt(sized(payload, Short.BYTES, what).get(NETWORK_SHORT, 0));
    }

    /** A 1-byte attribute value, as {@link #u32}. */
    public static int u8(MemorySegment payload, String what) {
        return Byte.toUnsignedInt(sized(payload, Byte.BYTES, what).get(ValueLayout.JAVA_BYTE, 0));
    }

    private static MemorySegment sized(MemorySegment payload, int bytes, String what) {
        if (payload.byteSize() != bytes) {
            throw new MalformedReplyException(what + " holds " + payload.byteSize() + " bytes, not " + bytes);
        }
        return payload;
    }

    /**
     * A string attribute: its bytes up to the first NUL, or all of them when the kernel sent none
     * (it always does; never read past the attribute for one).
     */
    public static String string(MemorySegment payload) {
        byte[] bytes = payload.toArray(ValueLayout.JAVA_BYTE);
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8);
    }

    /** The kernel's extended-ACK text of an NLMSG_ERROR message, or null. */
    public static String extendedAckMessage(MemorySegment message) {
        return extendedAck(message).message();
    }

    /** The extended ACK of an NLMSG_ERROR message: text, rejected offset, missing type; {@link ExtendedAck#NONE} without one. */
    public static ExtendedAck extendedAck(MemorySegment message) {
        int flags = flags(message);
        if ((flags & kernel_h.NLM_F_ACK_TLVS) == 0) {
            return ExtendedAck.NONE;
        }
        MemorySegment err = familyHeader(message, ERROR_BYTES, "error");
        long echoed = (flags & kernel_h.NLM_F_CAPPED) != 0 ? HEADER_BYTES
                : align(nlmsghdr.nlmsg_len(nlmsgerr.msg(err))) & 0xffffffffL;
        long offset = HEADER_BYTES + nlmsgerr.msg$OFFSET + echoed;
        if (echoed < HEADER_BYTES || offset > message.byteSize()) {
            throw new MalformedReplyException("an error message of " + message.byteSize() + " bytes echoes a request of "
                    + echoed + " bytes, which it cannot hold");
        }
        String[] text = {null};
        int[] rejected = {-1, -1};
        forEachAttribute(message, offset, (type, payload) -> {
            if (type == kernel_h.NLMSGERR_ATTR_MSG && text[0] == null) {
                text[0] = string(payload);
            } else if (type == kernel_h.NLMSGERR_ATTR_OFFS && rejected[0] < 0) {
                // The kernel's offset is unsigned; one past 2 GiB cannot point into a netlink message.
                rejected[0] = Math.max(-1, u32(payload, "the rejected attribute's offset"));
            } else if (type == kernel_h.NLMSGERR_ATTR_MISS_TYPE && rejected[1] < 0) {
                rejected[1] = Math.max(-1, u32(payload, "the missing attribute's type"));
            }
        });
        return text[0] == null && rejected[0] < 0 && rejected[1] < 0 ? ExtendedAck.NONE
                : new ExtendedAck(text[0], rejected[0], rejected[1]);
    }

    /** An attribute visitor: the type without flag bits, and the payload slice. */
    public interface AttributeVisitor {
        void visit(int type, MemorySegment payload);
    }

    /**
     * Visits the attributes from {@code offset} to the end of {@code container}. An attribute
     * shorter than its own header or longer than what is left of the container is a
     * {@link MalformedReplyException}; fewer bytes than a header at the end are padding.
     */
    public static void forEachAttribute(MemorySegment container, long offset, AttributeVisitor visitor) {
        long end = container.byteSize();
        int header = (int) nlattr.sizeof();
        while (offset + header <= end) {
            MemorySegment a = container.asSlice(offset, header);
            int len = Short.toUnsignedInt(nlattr.nla_len(a));
            if (len < header || offset + len > end) {
                throw new MalformedReplyException("an attribute of type " + (Short.toUnsignedInt(nlattr.nla_type(a))
                        & kernel_h.NLA_TYPE_MASK) + " at offset " + offset + " claims " + len + " bytes where "
                        + (end - offset) + " are left");
            }
            int type = Short.toUnsignedInt(nlattr.nla_type(a)) & kernel_h.NLA_TYPE_MASK;
            visitor.visit(type, container.asSlice(offset + header, len - header));
            offset += align(len);
        }
    }
}
