package dev.gatun.rtnl;

import dev.gatun.bindings.internal.ifaddrmsg;
import dev.gatun.bindings.internal.ifinfomsg;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.rtmsg;
import dev.gatun.testing.ReplyFuzz;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.lang.foreign.Arena;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rtnetlink decoders fed what `ip link`, `ip addr` and `ip route` received from the kernel,
 * mutated (ReplyFuzz): each decodes or throws gatun's own exception.
 */
class RtnlReplyFuzzPropertiesTest {

    private static List<byte[]> links() {
        return ReplyFuzz.messages("/reply-captures/ip-link-show.capture", t -> t == kernel_h.RTM_NEWLINK);
    }

    private static List<byte[]> addresses() {
        return ReplyFuzz.messages("/reply-captures/ip-addr-show.capture", t -> t == kernel_h.RTM_NEWADDR);
    }

    private static List<byte[]> routes() {
        return ReplyFuzz.messages("/reply-captures/ip-route-show.capture", t -> t == kernel_h.RTM_NEWROUTE);
    }

    @Provide
    Arbitrary<byte[]> mutatedLinks() {
        return ReplyFuzz.mutated(links(), Rtnetlink.attributesStart(ifinfomsg.sizeof()));
    }

    @Provide
    Arbitrary<byte[]> mutatedAddresses() {
        return ReplyFuzz.mutated(addresses(), Rtnetlink.attributesStart(ifaddrmsg.sizeof()));
    }

    @Provide
    Arbitrary<byte[]> mutatedRoutes() {
        return ReplyFuzz.mutated(routes(), Rtnetlink.attributesStart(rtmsg.sizeof()));
    }

    @Example
    void theSeedsDecode() {
        try (Arena arena = Arena.ofConfined()) {
            assertThat(links().stream().map(m -> LinkDecoder.decode(arena.allocateFrom(JAVA_BYTE, m)).name()))
                    .contains("lo", "br0", "v0", "v1");
            assertThat(addresses().stream().map(m -> AddressDecoder.decode(arena.allocateFrom(JAVA_BYTE, m)).prefix()))
                    .contains(Prefix.parse("10.9.0.1/24"), Prefix.parse("fd00::1/64"));
            assertThat(routes().stream().map(m -> RouteDecoder.decode(arena.allocateFrom(JAVA_BYTE, m)))
                    .filter(r -> r != null && r.gateway() != null).map(r -> r.destination()))
                    .contains(Prefix.parse("10.10.0.0/16"));
        }
    }

    @Property(tries = 500)
    void links(@ForAll("mutatedLinks") byte[] message) {
        ReplyFuzz.decodes(message, LinkDecoder::decode);
    }

    @Property(tries = 500)
    void addresses(@ForAll("mutatedAddresses") byte[] message) {
        ReplyFuzz.decodes(message, AddressDecoder::decode);
    }

    @Property(tries = 500)
    void routes(@ForAll("mutatedRoutes") byte[] message) {
        ReplyFuzz.decodes(message, RouteDecoder::decode);
    }
}
