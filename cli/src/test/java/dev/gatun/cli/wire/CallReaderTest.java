package dev.gatun.cli.wire;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Calls read as a non-blocking socket gives them: a byte at a time, with reads that find nothing between. */
class CallReaderTest {

    /** A channel that gives {@code bytes} one at a time, with an empty read after each, then the end. */
    private static ReadableByteChannel trickle(byte[] bytes) {
        return new ReadableByteChannel() {
            private int at;
            private boolean empty;

            @Override
            public int read(ByteBuffer dst) {
                if (at == bytes.length) {
                    return -1;
                }
                empty = !empty;
                if (empty || !dst.hasRemaining()) {
                    return 0;
                }
                dst.put(bytes[at++]);
                return 1;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    void aCallThatComesAByteAtATimeIsWholeOnceItsBodyIs() throws Exception {
        byte[] call = ServeWire.request(ServeWire.Kind.CLI, ServeWire.commandLine(List.of("publish", "n1", "10.88.0.2",
                "-p", "8080:80")));
        ServeWire.CallReader reader = new ServeWire.CallReader(ServeWire.MAX_BODY);
        ReadableByteChannel channel = trickle(call);
        int reads = 0;
        while (!reader.readFrom(channel)) {
            reads++;
            assertThat(reads).as("reads before the call is whole").isLessThan(10 * call.length);
        }

        assertThat(reader.kind()).isEqualTo(ServeWire.Kind.CLI);
        assertThat(ServeWire.commandLine(reader.body())).containsExactly("publish", "n1", "10.88.0.2", "-p", "8080:80");
    }

    @Test
    void aFirstLineThatIsNoCallIsRefusedBeforeItsBody() {
        ServeWire.CallReader reader = new ServeWire.CallReader(ServeWire.MAX_BODY);
        assertThatThrownBy(() -> {
            ReadableByteChannel c = trickle("http 12\nGET / HTTP/1.1".getBytes(StandardCharsets.US_ASCII));
            while (!reader.readFrom(c)) {
                assertThat(reader.complete()).isFalse();
            }
        }).isInstanceOf(Refused.class).hasMessageContaining("'cli', 'cni' or 'netavark'");
    }

    @Test
    void aFirstLineLongerThanACallsIsRefused() {
        ServeWire.CallReader reader = new ServeWire.CallReader(ServeWire.MAX_BODY);
        byte[] noNewline = "x".repeat(ServeWire.MAX_HEAD + 10).getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> {
            ReadableByteChannel c = trickle(noNewline);
            while (!reader.readFrom(c)) {
                assertThat(reader.kind()).isNull();
            }
        }).isInstanceOf(Refused.class).hasMessageContaining("at most " + ServeWire.MAX_HEAD + " bytes");
    }

    @Test
    void aCallThatEndsEarlyIsRefused() {
        byte[] call = ServeWire.request(ServeWire.Kind.CLI, ServeWire.commandLine(List.of("ls")));
        byte[] cut = java.util.Arrays.copyOf(call, call.length - 1);
        ServeWire.CallReader reader = new ServeWire.CallReader(ServeWire.MAX_BODY);
        assertThatThrownBy(() -> {
            ReadableByteChannel c = trickle(cut);
            while (!reader.readFrom(c)) {
                assertThat(reader.complete()).isFalse();
            }
        }).isInstanceOf(Refused.class).hasMessageContaining("ended before its body");
    }
}
