package dev.gatun.rtnl;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.rtmsg;
import dev.gatun.netlink.NetlinkMessages;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** A unicast route from an RTM_NEWROUTE message; null for other route types. */
final class RouteDecoder {

    private RouteDecoder() {}

    static Route decode(MemorySegment m) {
        if (NetlinkMessages.type(m) != kernel_h.RTM_NEWROUTE) {
            return null;
        }
        MemorySegment rt = NetlinkMessages.familyHeader(m, rtmsg.sizeof(), "route");
        if (Byte.toUnsignedInt(rtmsg.rtm_type(rt)) != kernel_h.RTN_UNICAST) {
            return null;
        }
        byte[][] dst = {null};
        byte[][] gw = {null};
        int[] oif = {0};
        int[] table = {Byte.toUnsignedInt(rtmsg.rtm_table(rt))};
        NetlinkMessages.forEachAttribute(m, Rtnetlink.attributesStart(rtmsg.sizeof()), (type, payload) -> {
            switch (type) {
                case kernel_h.RTA_DST -> dst[0] = payload.toArray(JAVA_BYTE);
                case kernel_h.RTA_GATEWAY -> gw[0] = payload.toArray(JAVA_BYTE);
                case kernel_h.RTA_OIF -> oif[0] = NetlinkMessages.u32(payload, "RTA_OIF");
                case kernel_h.RTA_TABLE -> table[0] = NetlinkMessages.u32(payload, "RTA_TABLE");
                default -> { }
            }
        });
        int dstLen = Byte.toUnsignedInt(rtmsg.rtm_dst_len(rt));
        Prefix destination = dst[0] == null ? null : new Prefix(Rtnetlink.inet(dst[0]), dstLen);
        InetAddress gateway = gw[0] == null ? null : Rtnetlink.inet(gw[0]);
        return new Route(destination, gateway, oif[0], table[0]);
    }
}
