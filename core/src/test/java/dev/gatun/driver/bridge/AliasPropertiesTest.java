package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/** A network's and an endpoint's link alias, both ways, and what a bad or foreign alias gives. No kernel, no root. */
class AliasPropertiesTest {

    @Property
    void aNetworkAliasReadsBackAsWritten(@ForAll("networks") NetworkAlias a) {
        String text;
        try {
            text = a.encode();
        } catch (InvalidInputException tooLong) {
            assertThat(tooLong).hasMessageContaining("255 bytes");
            return;
        }
        assertThat(text.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(255);
        assertThat(NetworkAlias.decode(text)).contains(a);
        assertThat(EndpointAlias.decode(text)).as("a network's alias is no endpoint's").isEmpty();
    }

    @Property
    void anEndpointAliasReadsBackAsWrittenOrWithoutItsNamespaceWhenTooLong(@ForAll("endpoints") EndpointAlias a) {
        EndpointAlias fitted = a.fitting();
        String text;
        try {
            text = fitted.encode();
        } catch (InvalidInputException tooLongEvenWithout) {
            assertThat(fitted.namespace()).isNull();
            assertThat(tooLongEvenWithout).hasMessageContaining("255 bytes").hasMessageContaining("network");
            return;
        }
        assertThat(text.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(255);
        assertThat(EndpointAlias.decode(text)).contains(fitted);
        assertThat(NetworkAlias.decode(text)).as("an endpoint's alias is no network's").isEmpty();
        if (!fitted.equals(a)) {
            assertThat(fitted.namespace()).isNull();
            assertThat(fitted).isEqualTo(new EndpointAlias(a.network(), a.namespaceInode(), a.ifname(), a.ip(), a.ip6(),
                    a.mac(), a.owner(), null));
            assertThatThrownBy(a::encode).isInstanceOf(InvalidInputException.class);
        }
    }

    @Property(tries = 2000)
    void anyAliasIsGatunsOrNotOrATypedError(@ForAll("aliases") String alias) {
        for (var decode : List.<Function<String, Optional<?>>>of(NetworkAlias::decode,
                EndpointAlias::decode)) {
            Throwable thrown = catchThrowable(() -> decode.apply(alias));
            assertThat(thrown).as("decoding '%s'", alias).satisfiesAnyOf(
                    t -> assertThat(t).isNull(),
                    t -> assertThat(t).isInstanceOf(MalformedAliasException.class).hasMessageContaining(alias));
        }
    }

    @Property
    void anAliasOfAnotherToolIsNotGatuns(@ForAll("foreign") String alias) {
        assertThat(NetworkAlias.decode(alias)).isEmpty();
        assertThat(EndpointAlias.decode(alias)).isEmpty();
    }

    @Example
    void aliasesAsEarlierGatunsWroteThemStillRead() throws Exception {
        // Bridges and veths made before the aliases were records carry this text in the kernel.
        assertThat(NetworkAlias.decode("gatun-network name=n1 v4=10.88.0.0%2F16 gw4=10.88.0.1 v6=fd00%3A%3A%2F64"
                + " gw6=fd00%3A%3A1 icc=1 internal=0 masq=1")).contains(new NetworkAlias("n1", Prefix.parse("10.88.0.0/16"),
                InetAddress.getByName("10.88.0.1"), Prefix.parse("fd00::/64"), InetAddress.getByName("fd00::1"),
                true, false, true, false));
        assertThat(EndpointAlias.decode("gatun-endpoint network=n1 nsino=4026532001 ifname=eth0 ip=10.88.0.2"
                + " mac=02%3A42%3A0a%3A58%3A00%3A02 owner=web+1%2F%22x%22 ns=%2Fproc%2F42%2Fns%2Fnet"))
                .contains(new EndpointAlias("n1", 4026532001L, "eth0", InetAddress.getByName("10.88.0.2"), null,
                        MacAddress.parse("02:42:0a:58:00:02"), "web 1/\"x\"", "/proc/42/ns/net"));
    }

    @Example
    void aMalformedAliasNamesWhatIsWrong() {
        assertThat(catchThrowable(() -> NetworkAlias.decode("gatun-network name=n1 gw4=10.88.0.1")))
                .isInstanceOf(MalformedAliasException.class).hasMessageContaining("v4");
        assertThat(catchThrowable(() -> NetworkAlias.decode("gatun-network name=n1 v4=fd00%3A%3A%2F64 gw4=10.88.0.1")))
                .isInstanceOf(MalformedAliasException.class).hasMessageContaining("IPv4");
        assertThat(catchThrowable(() -> EndpointAlias.decode("gatun-endpoint network=n1 nsino=x ifname=eth0"
                + " ip=10.88.0.2 mac=02%3A42%3A0a%3A58%3A00%3A02 owner=o")))
                .isInstanceOf(MalformedAliasException.class).hasMessageContaining("nsino");
        assertThat(catchThrowable(() -> EndpointAlias.decode("gatun-endpoint network=n1 ifname=eth0 ip=10.88.0.2"
                + " mac=%zz owner=o"))).isInstanceOf(MalformedAliasException.class).hasMessageContaining("mac");
    }

    // ------------------------------------------------------------------ generators

    /** Any text of valid UTF-16 (an unpaired surrogate has no UTF-8 form), separators and '%' included. */
    private static Arbitrary<String> texts(int min, int max) {
        Arbitrary<String> plain = Arbitraries.strings().withChars("abz09 =%+/\"'é\u00a0\t").ofMinLength(min)
                .ofMaxLength(max);
        Arbitrary<String> any = Arbitraries.strings().ofMinLength(min).ofMaxLength(max)
                .filter(s -> s.equals(new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)));
        return Arbitraries.oneOf(plain, any);
    }

    private static Arbitrary<InetAddress> v4() {
        return Arbitraries.bytes().array(byte[].class).ofSize(4).map(AliasPropertiesTest::address);
    }

    private static Arbitrary<InetAddress> v6() {
        return Arbitraries.bytes().array(byte[].class).ofSize(16).map(b -> {
            b[0] = (byte) 0xfd; // never IPv4-mapped, which Java would turn into IPv4
            return address(b);
        });
    }

    @Provide
    Arbitrary<NetworkAlias> networks() {
        Arbitrary<Prefix> subnet4 = Combinators.combine(v4(), Arbitraries.integers().between(0, 32)).as(Prefix::new)
                .map(Prefix::network);
        Arbitrary<Prefix> subnet6 = Combinators.combine(v6(), Arbitraries.integers().between(0, 128)).as(Prefix::new)
                .map(Prefix::network).injectNull(0.4);
        Arbitrary<Boolean> flag = Arbitraries.of(true, false);
        return Combinators.combine(texts(1, 80), subnet4, v4(), subnet6, v6(), flag, flag, flag)
                .as((name, s4, g4, s6, g6, icc, internal, masq) ->
                        new NetworkAlias(name, s4, g4, s6, s6 == null ? null : g6, icc, internal, masq, false))
                .flatMap(a -> flag.map(counters -> new NetworkAlias(a.name(), a.subnet4(), a.gateway4(), a.subnet6(),
                        a.gateway6(), a.icc(), a.internal(), a.masquerade(), counters)));
    }

    @Provide
    Arbitrary<EndpointAlias> endpoints() {
        Arbitrary<Long> inode = Arbitraries.longs().injectNull(0.2);
        Arbitrary<MacAddress> mac = Arbitraries.bytes().array(byte[].class).ofSize(6).map(b -> {
            b[0] = (byte) ((b[0] & 0xfe) | 0x02); // unicast, locally administered: never refused
            return MacAddress.parse(HexFormat.ofDelimiter(":").formatHex(b));
        });
        return Combinators.combine(texts(1, 40), inode, texts(1, 15), v4(), v6().injectNull(0.5), mac, texts(1, 80),
                texts(0, 120).injectNull(0.2)).as(EndpointAlias::new);
    }

    /** Aliases that start as gatun's and go on with pieces of real fields, cut and mixed up. */
    @Provide
    Arbitrary<String> aliases() {
        Arbitrary<String> piece = Arbitraries.of("name=", "network=", "v4=", "gw4=", "v6=", "gw6=", "ip=", "ip6=", "mac=",
                "nsino=", "ifname=", "owner=", "ns=", "icc=1", "10.88.0.0%2F16", "10.88.0.1", "fd00%3A%3A%2F64",
                "fd00%3A%3A1", "02%3A42%3A0a%3A58%3A00%3A02", "01%3A00%3A00%3A00%3A00%3A00", "%", "%z", "%2", "%C3",
                "+", " ", "  ", "=", "x", "-1", "99999999999999999999", "/33", "%2F", "n1", "eth0");
        Arbitrary<String> body = piece.list().ofMaxSize(24).map(l -> String.join("", l));
        Arbitrary<String> kind = Arbitraries.of("gatun-network ", "gatun-endpoint ", "gatun-network", "gatun-", "");
        return Arbitraries.oneOf(Combinators.combine(kind, body).as(String::concat), texts(0, 100));
    }

    @Provide
    Arbitrary<String> foreign() {
        return Arbitraries.oneOf(texts(0, 100).filter(s -> !s.startsWith("gatun-")),
                Arbitraries.of("", "docker0 bridge", "gatun-networks name=n1", "gatun-endpoint", "Gatun-network name=n1"));
    }

    private static InetAddress address(byte[] b) {
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
