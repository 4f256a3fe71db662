package dev.gatun.driver;

import dev.gatun.InvalidInputException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Docker's {@code -p} words, read without root and without a kernel: one row per spec. */
class PortSpecTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', nullValues = "*", value = {
            "8080:80                 | *         | 8080 | 8080 | 80   | 80   | TCP",
            "53/udp                  | *         | 53   | 53   | 53   | 53   | UDP",
            "127.0.0.1:5353:53/udp   | 127.0.0.1 | 5353 | 5353 | 53   | 53   | UDP",
            "[::1]:8080:80           | ::1       | 8080 | 8080 | 80   | 80   | TCP",
            "9000-9009:9100-9109/sctp | *        | 9000 | 9009 | 9100 | 9109 | SCTP",
            "1:65535                 | *         | 1    | 1    | 65535 | 65535 | TCP"})
    void aGoodSpecIsReadAsDocumented(String spec, String hostIp, int hostStart, int hostEnd, int containerStart,
                                        int containerEnd, Protocol protocol) {
        InetAddress ip = hostIp == null ? null : InetAddress.ofLiteral(hostIp);
        assertThat(PortSpec.parse(spec))
                .isEqualTo(new PortSpec(ip, hostStart, hostEnd, containerStart, containerEnd, protocol));
    }

    /** Every row must be refused, and the message must name what is wrong with it. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "0:80                 | '0:80'                 | port 0",
            "65536:80             | '65536:80'             | 65536",
            "70000:80             | '70000:80'             | 70000",
            "8080:0               | '8080:0'               | port 0",
            "8000-8010:80-81      | '8000-8010:80-81'      | different lengths",
            "8010-8000:80         | '8010-8000:80'         | reversed",
            "8080:80-70           | '8080:80-70'           | reversed",
            "8080:80/icmp         | '8080:80/icmp'         | 'icmp'",
            "8080:80/TCPX         | '8080:80/TCPX'         | 'TCPX'",
            "8080::80:x           | '8080::80:x'           | ':'",
            "::1:8080:80          | '::1:8080:80'          | brackets",
            "[::1]8080:80         | '[::1]8080:80'         | brackets",
            "10.0.0.300:8080:80   | '10.0.0.300:8080:80'   | 10.0.0.300",
            ":8080:80             | ':8080:80'             | host address",
            "http:80              | 'http:80'              | 'http'",
            "8080:                | '8080:'                | container port",
            "1.2.3.4 -j ACCEPT:8080:80 | '1.2.3.4 -j ACCEPT:8080:80' | 1.2.3.4 -j ACCEPT"})
    void aBadSpecIsRefusedNamingTheValue(String spec, String quoted, String what) {
        assertThatThrownBy(() -> PortSpec.parse(spec)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(quoted).hasMessageContaining(what);
    }
}
