package dev.gatun.rtnl;

import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netlink.NetlinkMessages;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.Deque;

import static dev.gatun.bindings.internal.libmnl_h.*;

/** One rtnetlink request: a header, the family header (NetlinkMessages), attributes (libmnl). */
final class RtnlRequest implements AutoCloseable {

    private static final int CAPACITY = 8192;

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment nlh;
    private final MemorySegment family;
    private final Deque<MemorySegment> nests = new ArrayDeque<>();
    final String operation;

    /** {@code familyHeaderBytes} is the size of ifinfomsg, ifaddrmsg or rtmsg. */
    RtnlRequest(String operation, int type, int flags, long familyHeaderBytes) {
        this.operation = operation;
        nlh = NetlinkMessages.startRequest(arena.allocate(CAPACITY, 8), type, flags);
        family = NetlinkMessages.append(nlh, familyHeaderBytes);
    }

    /** The family header (ifinfomsg, ifaddrmsg or rtmsg) to fill in. */
    MemorySegment header() {
        return family;
    }

    RtnlRequest string(int type, String value) {
        NetlinkMessages.appendString(nlh, type, value);
        return this;
    }

    RtnlRequest u32(int type, int value) {
        mnl_attr_put_u32(nlh, (short) type, value);
        return this;
    }

    RtnlRequest u8(int type, int value) {
        mnl_attr_put_u8(nlh, (short) type, (byte) value);
        return this;
    }

    RtnlRequest bytes(int type, byte[] value) {
        mnl_attr_put(nlh, (short) type, value.length, arena.allocateFrom(ValueLayout.JAVA_BYTE, value));
        return this;
    }

    RtnlRequest begin(int type) {
        nests.push(mnl_attr_nest_start(nlh, (short) type));
        return this;
    }

    RtnlRequest end() {
        mnl_attr_nest_end(nlh, nests.pop());
        return this;
    }

    /** Appends a family header (also the veth peer's nested ifinfomsg), zeroed, and returns it to fill in. */
    MemorySegment inlineHeader(long bytes) {
        return NetlinkMessages.append(nlh, bytes);
    }

    MemorySegment message() {
        return nlh;
    }

    int length() {
        return nlmsghdr.nlmsg_len(nlh);
    }

    @Override
    public void close() {
        arena.close();
    }
}
