package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.net.InetAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request's repeated host ports, found the same way whether it names a few (a small set) or
 * many (a bit set): against a plain set of host keys as the model. No root.
 */
class RequestKeysTest {

    private static final InetAddress V4 = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress V6 = InetAddress.ofLiteral("fd00::2");
    private static final InetAddress HOST = InetAddress.ofLiteral("192.0.2.10");

    @Property(tries = 200)
    void aKeyIsNewExactlyWhenTheModelHasNotSeenIt(
            @ForAll @Size(max = 300) List<@IntRange(min = 0, max = 3000) Integer> picks) {
        RequestKeys keys = new RequestKeys();
        Set<PortMapping.HostKey> model = new HashSet<>();
        for (int pick : picks) {
            // A few hundred ports over both families, three protocols, every address and one address.
            Protocol protocol = Protocol.values()[pick % 3];
            InetAddress container = pick % 2 == 0 ? V4 : V6;
            InetAddress hostIp = pick % 5 == 0 && container == V4 ? HOST : null;
            int port = 1 + pick / 7;
            PortMapping m = new PortMapping("n1", protocol, hostIp, port, container, 80, "o");
            assertThat(keys.add(m)).as("%s", m).isEqualTo(model.add(m.hostKey()));
        }
    }
}
