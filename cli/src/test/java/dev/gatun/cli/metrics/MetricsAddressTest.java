package dev.gatun.cli.metrics;

import dev.gatun.InvalidInputException;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MetricsAddressTest {

    @Test
    void aPortAloneIsLoopbackAndAnAddressIsTakenOnlyWhenNamed() {
        assertThat(MetricsAddress.parse("9464")).isEqualTo(new InetSocketAddress("127.0.0.1", 9464));
        assertThat(MetricsAddress.parse("127.0.0.1:0")).isEqualTo(new InetSocketAddress("127.0.0.1", 0));
        assertThat(MetricsAddress.parse("[::1]:9464")).isEqualTo(new InetSocketAddress("::1", 9464));
        assertThat(MetricsAddress.parse("0.0.0.0:9464").getAddress().isAnyLocalAddress()).isTrue();
    }

    @Test
    void namesBadPortsAndUnbracketedIpv6AreRefusedNamingTheValue() {
        assertThatThrownBy(() -> MetricsAddress.parse("localhost:9464")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("--metrics localhost:9464: localhost is not an IP address");
        assertThatThrownBy(() -> MetricsAddress.parse("70000")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("the port 70000 is not a number from 0 to 65535");
        assertThatThrownBy(() -> MetricsAddress.parse("127.0.0.1:")).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> MetricsAddress.parse("::1:9464")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("in brackets");
        assertThatThrownBy(() -> MetricsAddress.parse("[::1]9464")).isInstanceOf(InvalidInputException.class);
    }
}
