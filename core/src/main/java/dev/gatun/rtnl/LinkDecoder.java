package dev.gatun.rtnl;

import dev.gatun.bindings.internal.ifinfomsg;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** A link from an RTM_NEWLINK message. */
final class LinkDecoder {

    private LinkDecoder() {}

    static Link decode(MemorySegment m) {
        if (NetlinkMessages.type(m) != kernel_h.RTM_NEWLINK) {
            return null;
        }
        MemorySegment ifi = NetlinkMessages.familyHeader(m, ifinfomsg.sizeof(), "link");
        String[] name = {null};
        String[] kind = {null};
        String[] alias = {null};
        byte[][] mac = {null};
        int[] mtu = {0};
        int[] master = {0};
        int[] oper = {0};
        NetlinkMessages.forEachAttribute(m, Rtnetlink.attributesStart(ifinfomsg.sizeof()), (type, payload) -> {
            switch (type) {
                case kernel_h.IFLA_IFNAME -> name[0] = NetlinkMessages.string(payload);
                case kernel_h.IFLA_ADDRESS -> mac[0] = payload.toArray(JAVA_BYTE);
                case kernel_h.IFLA_MTU -> mtu[0] = NetlinkMessages.u32(payload, "IFLA_MTU");
                case kernel_h.IFLA_MASTER -> master[0] = NetlinkMessages.u32(payload, "IFLA_MASTER");
                case kernel_h.IFLA_OPERSTATE -> oper[0] = NetlinkMessages.u8(payload, "IFLA_OPERSTATE");
                case kernel_h.IFLA_IFALIAS -> alias[0] = NetlinkMessages.string(payload);
                case kernel_h.IFLA_LINKINFO -> NetlinkMessages.forEachAttribute(payload, 0, (t, p) -> {
                    if (t == kernel_h.IFLA_INFO_KIND) {
                        kind[0] = NetlinkMessages.string(p);
                    }
                });
                default -> { }
            }
        });
        Link.OperState[] states = Link.OperState.values();
        return new Link(ifinfomsg.ifi_index(ifi), name[0], kind[0],
                mac[0] != null && mac[0].length == 6 ? MacAddress.reported(mac[0]) : null, mtu[0], master[0],
                (ifinfomsg.ifi_flags(ifi) & kernel_h.IFF_UP) != 0,
                oper[0] < states.length ? states[oper[0]] : Link.OperState.UNKNOWN, alias[0]);
    }

}
