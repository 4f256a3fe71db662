package dev.gatun.testing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ByteDiffTest {

    @Test
    void equalBytesPass() {
        assertThatCode(() -> ByteDiff.assertSameBytes("m", new byte[] {1, 2, 3}, new byte[] {1, 2, 3}, 0)).doesNotThrowAnyException();
    }

    @Test
    void aDifferenceIsShownFourBytesALineWithItsOffsetMarked() {
        byte[] expected = {0x0c, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x75, 0x30, 0x01};
        byte[] actual = {0x0c, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x75, 0x31};
        assertThatThrownBy(() -> ByteDiff.assertSameBytes("message 2", expected, actual, 16))
                .isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("message 2: the bytes differ first at offset 23 (expected 9 bytes, got 8)")
                .hasMessageContaining(String.format("0010    0c 00 0b 00  0c 00 0b 00%n"))
                .hasMessageContaining(String.format("0014    00 00 75 30  00 00 75 31  <--%n"))
                .hasMessageContaining(String.format("0018    01                        <--%n"));
    }
}
