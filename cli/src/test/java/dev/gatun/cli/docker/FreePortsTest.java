package dev.gatun.cli.docker;

import dev.gatun.InvalidInputException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** net.ipv4.ip_local_reserved_ports as the kernel prints it (Documentation/networking/ip-sysctl.rst). */
class FreePortsTest {

    @Test
    void reservedPortsAreReadAsTheKernelPrintsThem() {
        assertThat(FreePorts.reservedPorts("")).isEmpty();
        assertThat(FreePorts.reservedPorts("\n")).isEmpty();
        assertThat(FreePorts.reservedPorts("8080\n")).containsExactly(8080);
        assertThat(FreePorts.reservedPorts("1,2-4,10\n")).containsExactlyInAnyOrder(1, 2, 3, 4, 10);
        assertThatThrownBy(() -> FreePorts.reservedPorts("x")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'x'");
    }
}
