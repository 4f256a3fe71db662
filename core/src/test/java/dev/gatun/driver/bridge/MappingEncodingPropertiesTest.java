package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Objects;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A published port written the way each firewall keeps it and read back: as an element of
 * gatun's nftables maps (bytes laid out by the map's types), and as the iptables drivers' DNAT
 * rule. No kernel, no root; what the kernel and iptables-save make of them is the root tests' part.
 */
class MappingEncodingPropertiesTest {

    @Property
    void aMapElementReadsBackAsTheMapping(@ForAll("mappings") PortMapping m, @ForAll boolean counted) {
        assertThat(MappingElements.mapping(MappingElements.map(m), MappingElements.element(m, counted))).isEqualTo(m);
    }

    @Property
    void theMapOfAMappingIsOfItsFamilyAndHostAddress(@ForAll("mappings") PortMapping m) {
        boolean v6 = m.containerIp().getAddress().length == 16;
        String expected = (m.hostIp() == null ? "ports" : "hostip") + (v6 ? "6" : "4");
        assertThat(MappingElements.map(m).name()).isEqualTo(expected);
    }

    @Property
    void aDnatRuleReadsBackAsTheMapping(@ForAll("mappings") PortMapping m) {
        assertThat(DnatRules.parse("-A " + DnatRules.rule(m))).contains(m);
    }

    @Property
    void twoMappingsShareADnatKeyExactlyWhenTheyCollideOnTheHost(@ForAll("mappings") PortMapping a,
                                                               @ForAll("mappings") PortMapping b) {
        boolean collide = (a.containerIp().getAddress().length == b.containerIp().getAddress().length)
                && Objects.equals(a.hostIp(), b.hostIp()) && a.protocol() == b.protocol()
                && a.hostPort() == b.hostPort();
        assertThat(DnatRules.key(a).equals(DnatRules.key(b))).isEqualTo(collide);
    }

    @Provide
    Arbitrary<PortMapping> mappings() {
        return Arbitraries.of(false, true).flatMap(v6 -> {
            Arbitrary<InetAddress> address = Arbitraries.bytes().array(byte[].class).ofSize(v6 ? 16 : 4).map(b -> {
                if (v6) {
                    b[0] = (byte) 0xfd; // never IPv4-mapped, which Java would turn into IPv4
                }
                return address(b);
            });
            Arbitrary<Integer> port = Arbitraries.integers().between(1, 65535).edgeCases(e -> e.add(1, 255, 256, 65535));
            Arbitrary<String> owner = Arbitraries.strings().ofMinLength(1).ofMaxLength(40)
                    .filter(s -> s.chars().noneMatch(c -> Character.isISOControl(c) || c == '"' || Character.isSurrogate((char) c)));
            return Combinators.combine(Arbitraries.of(Protocol.class), address.injectNull(0.5), port, address, port, owner)
                    .as((protocol, hostIp, hostPort, containerIp, containerPort, who) ->
                            new PortMapping(null, protocol, hostIp, hostPort, containerIp, containerPort, who));
        });
    }

    private static InetAddress address(byte[] b) {
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
