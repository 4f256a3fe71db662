package dev.gatun.nft;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KeySetPropertiesTest {

    /** Keys of 8 bytes from a small alphabet, so that many repeat and the table grows several times. */
    @Provide
    Arbitrary<List<byte[]>> keys() {
        Arbitrary<byte[]> key = Arbitraries.bytes().between((byte) 0, (byte) 3).array(byte[].class).ofSize(8);
        return key.list().ofMaxSize(400);
    }

    @Property
    void agreesWithAHashSet(@ForAll("keys") List<byte[]> added, @ForAll("keys") List<byte[]> asked) {
        KeySet set = new KeySet(8);
        Set<ByteBuffer> oracle = new HashSet<>();
        for (byte[] k : added) {
            assertThat(set.add(k)).isEqualTo(oracle.add(ByteBuffer.wrap(k)));
        }
        assertThat(set.size()).isEqualTo(oracle.size());
        for (byte[] k : added) {
            assertThat(set.contains(k)).isTrue();
        }
        for (byte[] k : asked) {
            assertThat(set.contains(k)).isEqualTo(oracle.contains(ByteBuffer.wrap(k)));
        }
    }

    @Property(tries = 10)
    void refusesAKeyOfAnotherWidth(@ForAll("keys") List<byte[]> added) {
        KeySet set = new KeySet(8);
        added.forEach(set::add);
        assertThatThrownBy(() -> set.add(new byte[12])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("8 bytes, not 12");
        assertThatThrownBy(() -> set.contains(new byte[4])).isInstanceOf(IllegalArgumentException.class);
    }
}
