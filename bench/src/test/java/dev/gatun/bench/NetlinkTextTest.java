package dev.gatun.bench;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.assertj.core.api.Assertions.assertThat;

class NetlinkTextTest {

    /** A batch: BEGIN with a generation id, one NEWSETELEM with a 4-byte payload, END. */
    private static byte[] batch(int seq, int portId, int generation, byte payload) {
        ByteBuffer b = ByteBuffer.allocate(28 + 20 + 20).order(ByteOrder.nativeOrder());
        b.putInt(28).putShort((short) 0x10).putShort((short) 1).putInt(seq).putInt(portId);
        b.put(new byte[] {0, 0, 0, 10}).putShort((short) 8).putShort((short) 1).putInt(generation);
        b.putInt(20).putShort((short) 0x0a0c).putShort((short) 0x405).putInt(seq + 1).putInt(portId);
        b.put(new byte[] {1, 0, 0, payload});
        b.putInt(20).putShort((short) 0x11).putShort((short) 1).putInt(seq + 2).putInt(portId);
        b.put(new byte[] {0, 0, 0, 10});
        return b.array();
    }

    @Test
    void ignoresSequencePortIdAndGeneration() {
        assertThat(NetlinkText.messages(batch(100, 7, 3, (byte) 5))).hasSize(3)
                .isEqualTo(NetlinkText.messages(batch(900, 8, 4, (byte) 5)));
    }

    @Test
    void seesEveryOtherByte() {
        assertThat(NetlinkText.messages(batch(100, 7, 3, (byte) 5))).isNotEqualTo(NetlinkText.messages(batch(100, 7, 3, (byte) 6)));
    }

    @Test
    void tellsTheCommitFromTheLookups() {
        assertThat(NetlinkText.addsElements(batch(1, 1, 1, (byte) 0))).isTrue();
        byte[] lookup = batch(1, 1, 1, (byte) 0);
        lookup[28 + 4] = 0x0d; // NEWSETELEM becomes GETSETELEM
        assertThat(NetlinkText.addsElements(lookup)).isFalse();
        assertThat(NetlinkText.touchesNftables(lookup)).isTrue();
    }
}
