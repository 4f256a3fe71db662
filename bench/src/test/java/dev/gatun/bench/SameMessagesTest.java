package dev.gatun.bench;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.ByteDiff;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The C floor is a floor only if it sends what gatun sends: each publishes the same three ports
 * in a namespace of its own (gatun's table and network n1, as the bench sets them up), under
 * strace, driven as the bench drives it; the datagrams of the third publish (its sock_diag
 * lookups included: the floor asks the host's sockets as gatun does), the warm one the
 * bench measures (the first two also read the host's addresses), must be the same bytes but for
 * sequence numbers, port ids and the generation id. The Java floor is held to the same.
 */
@ExtendWith(FreshNamespaces.class)
class SameMessagesTest {

    private static final List<String> PUBLISHES = List.of("52000 1", "52001 1", "52002 1");

    @ParameterizedTest
    @ValueSource(strings = {"gatun", "java-floor"})
    void sendsTheSameBytesAsTheCFloor(String tool, NetworkNamespace forC, NetworkNamespace forTool, @TempDir Path dir)
            throws Exception {
        requireStrace();
        Subjects.OnGatunTable.createNetwork(forC);
        Subjects.OnGatunTable.createNetwork(forTool);
        Path cFloor = CBuild.build(Path.of("").toAbsolutePath().getParent());

        List<List<String>> c = lastPublish(traced(dir.resolve("c.strace"), List.of("nsenter", "--net=" + forC.path(),
                cFloor.toString(), "1", Subjects.CONTAINER, "1", "bench", "0")));
        List<List<String>> other = lastPublish(traced(dir.resolve(tool + ".strace"), List.of(
                ProcessHandle.current().info().command().orElseThrow(), "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), Worker.class.getName(), tool, forTool.name(), "1")));

        // What the floor sends: the lookups (GETGEN and GETSETELEM in one datagram, none asking for
        // an ACK: flags NLM_F_REQUEST alone), then, the key being new, exact SOCK_DIAG_BY_FAMILY
        // lookups in one datagram (would a TCP socket of the host take the port on 0.0.0.0 or on
        // the namespace's one address, 10.88.0.1?), then the batch.
        assertThat(c).hasSize(3);
        assertThat(c.get(0)).first().asString().contains("type 0x0a10");
        assertThat(c.get(0)).allMatch(m -> m.contains("flags 0x0001"));
        assertThat(c.get(1)).hasSize(2).allMatch(m -> m.contains("type 0x0014 flags 0x0001") && m.contains(": 0206"));
        assertThat(c.get(2)).anyMatch(m -> m.contains("type 0x0a0c"));
        assertSameMessages(tool, c, other);
        assertThat(other).as("%s's datagrams of one warm publish against the C floor's", tool).isEqualTo(c);
    }

    /** The first message that differs from the floor's, shown four bytes a line where they part (counts are checked after). */
    private static void assertSameMessages(String tool, List<List<String>> floor, List<List<String>> other) {
        for (int d = 0; d < Math.min(floor.size(), other.size()); d++) {
            for (int m = 0; m < Math.min(floor.get(d).size(), other.get(d).size()); m++) {
                String want = floor.get(d).get(m);
                String got = other.get(d).get(m);
                String where = tool + ", datagram " + d + ", message " + m;
                assertThat(headerOf(got)).as(where).isEqualTo(headerOf(want));
                ByteDiff.assertSameBytes(where + " after its header", payloadOf(want), payloadOf(got), 16);
            }
        }
    }

    /** "type 0x.... flags 0x....", as NetlinkText writes it before the payload (a length apart shows in the bytes). */
    private static String headerOf(String message) {
        return message.substring(message.indexOf("type "), message.indexOf(": "));
    }

    private static byte[] payloadOf(String message) {
        return HexFormat.of().parseHex(message.substring(message.indexOf(": ") + 2));
    }

    /** The netlink datagrams of the last publish, as text: those after the second batch, up to the third. */
    private static List<List<String>> lastPublish(List<byte[]> sends) {
        List<Integer> batches = IntStream.range(0, sends.size()).filter(i -> NetlinkText.addsElements(sends.get(i)))
                .boxed().toList();
        assertThat(batches).as("batches adding set elements, one per publish").hasSize(PUBLISHES.size());
        List<List<String>> out = new ArrayList<>();
        for (int i = batches.get(batches.size() - 2) + 1; i <= batches.getLast(); i++) {
            out.add(NetlinkText.messages(sends.get(i)));
        }
        return out;
    }

    /** Runs {@code command} under strace, publishing the ports of {@link #PUBLISHES}; the netlink sends it made. */
    private static List<byte[]> traced(Path output, List<String> command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("strace", "-o", output.toString()));
        cmd.addAll(StraceSends.OPTIONS);
        cmd.addAll(command);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write((String.join("\n", PUBLISHES) + "\n").getBytes(StandardCharsets.UTF_8));
        }
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", command));
        }
        assertThat(p.exitValue()).as("%s said:%n%s", command.getFirst(), said).isZero();
        return StraceSends.netlink(output);
    }

    /** Skips without strace, or with CI=true fails: CI installs it (ci/setup). */
    private static void requireStrace() {
        try {
            if (new ProcessBuilder("strace", "-V").redirectErrorStream(true).start().waitFor() == 0) {
                return;
            }
        } catch (IOException e) {
            // not installed: below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String why = "compares netlink messages captured with strace, which is not installed (apt-get install strace)";
        if ("true".equals(System.getenv("CI"))) {
            throw new AssertionError(why);
        }
        Assumptions.abort(why);
    }
}
