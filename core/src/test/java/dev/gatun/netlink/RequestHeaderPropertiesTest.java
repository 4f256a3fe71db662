package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libmnl_h;
import dev.gatun.bindings.internal.nlmsghdr;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * gatun writes netlink request headers and string attributes itself (NetlinkMessages.startRequest,
 * append and appendString); libmnl, which writes them for nft and ip, is the oracle: the same
 * request bytes for any header sizes and strings.
 */
class RequestHeaderPropertiesTest {

    @Property(tries = 200)
    void headersAreTheBytesLibmnlWrites(@ForAll @IntRange(max = 0xffff) int type, @ForAll @IntRange(max = 0xffff) int flags,
                                        @ForAll @IntRange(max = 64) int familyHeader,
                                        @ForAll @IntRange(max = 64) int payload) {
        try (Arena arena = Arena.ofConfined()) {
            // Buffers full of garbage: every byte of the request must be written, padding too.
            MemorySegment ours = NetlinkMessages.startRequest(garbage(arena), type, flags);
            NetlinkMessages.append(ours, familyHeader).fill((byte) 0x5a);
            NetlinkMessages.append(ours, payload).fill((byte) 0xa5);

            MemorySegment theirs = libmnl_h.mnl_nlmsg_put_header(garbage(arena)).reinterpret(4096);
            nlmsghdr.nlmsg_type(theirs, (short) type);
            nlmsghdr.nlmsg_flags(theirs, (short) (flags | kernel_h.NLM_F_REQUEST)); // startRequest always sets it
            libmnl_h.mnl_nlmsg_put_extra_header(theirs, familyHeader).reinterpret(familyHeader).fill((byte) 0x5a);
            libmnl_h.mnl_nlmsg_put_extra_header(theirs, payload).reinterpret(payload).fill((byte) 0xa5);

            int length = nlmsghdr.nlmsg_len(theirs);
            assertThat(nlmsghdr.nlmsg_len(ours)).isEqualTo(length);
            assertThat(ours.asSlice(0, length).toArray(JAVA_BYTE)).isEqualTo(theirs.asSlice(0, length).toArray(JAVA_BYTE));
        }
    }

    @Property(tries = 200)
    void stringAttributesAreTheBytesLibmnlWrites(@ForAll @IntRange(max = 0x7fff) int type,
                                                 @ForAll @StringLength(max = 300) @CharRange(from = 1, to = 0xffff) String value,
                                                 @ForAll @IntRange(max = 64) int before) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ours = NetlinkMessages.startRequest(garbage(arena), 1, 0);
            NetlinkMessages.append(ours, before);
            NetlinkMessages.appendString(ours, type, value);

            MemorySegment theirs = NetlinkMessages.startRequest(garbage(arena), 1, 0);
            NetlinkMessages.append(theirs, before);
            libmnl_h.mnl_attr_put_strz(theirs, (short) type, arena.allocateFrom(value));

            assertThat(nlmsghdr.nlmsg_len(ours)).isEqualTo(nlmsghdr.nlmsg_len(theirs));
            // Up to the attribute's end: this libmnl leaves its padding as it found it; ours is zeroed.
            long end = NetlinkMessages.HEADER_BYTES + NetlinkMessages.align(before)
                    + Short.toUnsignedLong(theirs.get(JAVA_SHORT, NetlinkMessages.HEADER_BYTES + NetlinkMessages.align(before)));
            assertThat(ours.asSlice(0, end).toArray(JAVA_BYTE)).isEqualTo(theirs.asSlice(0, end).toArray(JAVA_BYTE));
            int padding = (int) (NetlinkMessages.align((int) end) - end);
            assertThat(ours.asSlice(end, padding).toArray(JAVA_BYTE)).isEqualTo(new byte[padding]);
        }
    }

    private static MemorySegment garbage(Arena arena) {
        return arena.allocate(4096, 8).fill((byte) 0xff);
    }
}
