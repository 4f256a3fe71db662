package dev.gatun.sockdiag;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decoding without privileges: real SOCK_DIAG_BY_FAMILY replies that the kernel sent to a
 * request written by hand (sock-diag-captures/capture.py), against what ss said of the same
 * sockets (the comment lines of each capture).
 */
class SockDiagDecodingTest {

    /** One socket as ss printed it: "LISTEN 0 128 [::]:8081 [::]:* ino:5981569 ... v6only:1". */
    private record SsLine(String endpoint, long inode, boolean v6only) {
        static SsLine parse(String line) {
            String[] f = line.substring(2).split(" ");
            String local = f[3].startsWith("*:") ? "[::]" + f[3].substring(1) : f[3];
            long inode = -1;
            boolean v6only = false;
            for (String field : f) {
                if (field.startsWith("ino:")) {
                    inode = Long.parseLong(field.substring(4));
                } else if (field.equals("v6only:1")) {
                    v6only = true;
                }
            }
            return new SsLine(local, inode, v6only);
        }
    }

    @ParameterizedTest
    @CsvSource({"tcp4-listen, 6, false", "tcp6-listen, 6, true", "udp6, 17, true"})
    void decodesWhatTheKernelSent(String capture, int protocol, boolean ipv6) throws IOException {
        List<SsLine> ss = new ArrayList<>();
        byte[] reply = null;
        try (InputStream in = getClass().getResourceAsStream("/sock-diag-captures/" + capture + ".capture")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (line.startsWith("# ss ")) {
                    continue;
                }
                if (line.startsWith("# ")) {
                    ss.add(SsLine.parse(line));
                } else if (!line.isBlank()) {
                    reply = HexFormat.of().parseHex(line.strip());
                }
            }
        }
        List<BoundSocket> decoded = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(reply.length, 8);
            MemorySegment.copy(reply, 0, buffer, ValueLayout.JAVA_BYTE, 0, reply.length);
            NetlinkMessages.forEach(buffer, reply.length, m -> {
                if (NetlinkMessages.type(m) == kernel_h.SOCK_DIAG_BY_FAMILY) {
                    decoded.add(HostSockets.decode(m, protocol));
                }
            });
        }
        assertThat(decoded).hasSameSizeAs(ss);
        for (int i = 0; i < ss.size(); i++) {
            BoundSocket s = decoded.get(i);
            SsLine expected = ss.get(i);
            assertThat(s.endpoint()).isEqualTo(expected.endpoint());
            assertThat(s.inode()).isEqualTo(expected.inode());
            assertThat(s.v6only()).isEqualTo(expected.v6only());
            assertThat(s.ipv6()).isEqualTo(ipv6);
            assertThat(s.protocol()).isEqualTo(protocol);
            assertThat(s.uid()).isZero();
        }
    }
}
