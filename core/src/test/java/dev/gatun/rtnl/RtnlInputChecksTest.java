package dev.gatun.rtnl;

import dev.gatun.InvalidInputException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Interface names, MACs and prefixes are checked before a request is made: no root, one row per value. */
class RtnlInputChecksTest {

    @ParameterizedTest
    @ValueSource(strings = {"eth0", "gatun-n1", "a-name-of-15-by", "br.0", "veth_0"})
    void aNameTheKernelTakesPasses(String name) {
        assertThat(InterfaceNames.check(name)).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a-name-longer-than-15", "br/0", "br 0", "br:0", "br\t0", ".", ".."})
    void aNameTheKernelRefusesIsRefusedNamingIt(String name) {
        assertThatThrownBy(() -> InterfaceNames.check(name)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'" + name.replace('\t', '?') + "'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "éééééééé"})
    void anEmptyNameOrOneOverFifteenBytesIsRefused(String name) {
        assertThatThrownBy(() -> InterfaceNames.check(name)).isInstanceOf(InvalidInputException.class);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "01:00:5e:00:00:01 | multicast",
            "00:00:00:00:00:00 | all zeros",
            "02:42:0a:58:00    | 02:42:0a:58:00",
            "02:42:0a:58:00:zz | 02:42:0a:58:00:zz"})
    void aMacAnInterfaceCannotHaveIsRefused(String mac, String named) {
        assertThatThrownBy(() -> MacAddress.parse(mac)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(mac).hasMessageContaining(named);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "10.0.0.1/33  | 33",
            "fd00::1/129  | 129",
            "10.0.0.300/8 | 10.0.0.300"})
    void aPrefixLongerThanItsAddressOrOfNoAddressIsRefused(String prefix, String named) {
        assertThatThrownBy(() -> Prefix.parse(prefix)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(prefix.substring(0, prefix.indexOf('/'))).hasMessageContaining(named);
    }

    /** Only literals: a host name is refused, not looked up; text meant for a command line is refused whole. */
    @ParameterizedTest
    @ValueSource(strings = {"1.2.3.4 -j ACCEPT", "10.0.0.300", "fd00::g", "localhost", "10.0.0.1/24"})
    void anAddressThatIsNotALiteralIsRefusedNamingIt(String text) {
        assertThatThrownBy(() -> Prefix.address(text)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'" + text + "'");
    }
}
