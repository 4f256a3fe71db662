package dev.gatun.rtnl;

import dev.gatun.bindings.internal.ifaddrmsg;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** An address from an RTM_NEWADDR message. */
final class AddressDecoder {

    private AddressDecoder() {}

    static InterfaceAddress decode(MemorySegment m) {
        if (NetlinkMessages.type(m) != kernel_h.RTM_NEWADDR) {
            return null;
        }
        MemorySegment ifa = NetlinkMessages.familyHeader(m, ifaddrmsg.sizeof(), "address");
        byte[][] local = {null};
        byte[][] address = {null};
        NetlinkMessages.forEachAttribute(m, Rtnetlink.attributesStart(ifaddrmsg.sizeof()), (type, payload) -> {
            if (type == kernel_h.IFA_LOCAL) {
                local[0] = payload.toArray(JAVA_BYTE);
            } else if (type == kernel_h.IFA_ADDRESS) {
                address[0] = payload.toArray(JAVA_BYTE);
            }
        });
        byte[] a = local[0] != null ? local[0] : address[0];
        if (a == null) {
            return null;
        }
        return new InterfaceAddress(ifaddrmsg.ifa_index(ifa),
                new Prefix(Rtnetlink.inet(a), Byte.toUnsignedInt(ifaddrmsg.ifa_prefixlen(ifa))));
    }
}
