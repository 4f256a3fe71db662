package dev.gatun.testing;

import dev.gatun.GatunException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.function.IntPredicate;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Fuzzing the decoders of kernel replies, starting from replies the kernel really sent (the
 * captures under reply-captures/ and sock-diag-captures/), mutated the ways a broken or hostile
 * peer could: cut short, lengths that claim too little or too much, zero-length and oversized
 * attributes, attributes shifted off their 4-byte alignment, wrapped in extra nests, repeated,
 * removed, retyped, and bytes changed at random.
 *
 * <p>A decoder may return a value or throw a {@link GatunException}; anything else fails the
 * property. The message lies at the end of its native allocation but for a run of {@link #CANARY}
 * bytes: a decoder (or libnftnl under it) that reads past the message into them shows it in the
 * strings it returns.
 */
public final class ReplyFuzz {

    /** Bytes after each message that no decoder may read: a string that holds them was read out of bounds. */
    public static final byte CANARY = 'Z';
    private static final int CANARY_BYTES = 64;
    private static final String CANARY_TEXT = "Z".repeat(8);
    private static final int HEADER = 16;
    private static final int NLA_F_NESTED = 0x8000;

    private ReplyFuzz() {}

    /** The datagrams of a capture: every line that is not a comment, as bytes. */
    public static List<byte[]> datagrams(String resource) {
        try (InputStream in = ReplyFuzz.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no capture " + resource);
            }
            List<byte[]> out = new ArrayList<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    out.add(HexFormat.of().parseHex(line.strip()));
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The messages of a capture's datagrams whose netlink type passes {@code type}. */
    public static List<byte[]> messages(String resource, IntPredicate type) {
        List<byte[]> out = new ArrayList<>();
        for (byte[] d : datagrams(resource)) {
            ByteBuffer b = ByteBuffer.wrap(d).order(ByteOrder.nativeOrder());
            int offset = 0;
            while (offset + HEADER <= d.length) {
                int len = b.getInt(offset);
                if (type.test(Short.toUnsignedInt(b.getShort(offset + 4)))) {
                    out.add(Arrays.copyOfRange(d, offset, offset + len));
                }
                offset += align(len);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("no message of that type in " + resource);
        }
        return out;
    }

    /**
     * The seeds, each mutated one to three times; the first {@code attributesStart} bytes of a
     * message are its headers, after which its attributes begin.
     */
    public static Arbitrary<byte[]> mutated(List<byte[]> seeds, int attributesStart) {
        return Arbitraries.of(seeds).flatMap(seed -> Arbitraries.randomValue(random -> {
            byte[] m = seed;
            int times = 1 + random.nextInt(3);
            for (int i = 0; i < times; i++) {
                m = mutateOnce(m, attributesStart, random);
            }
            return m;
        }));
    }

    /**
     * Runs {@code decoder} on {@code message} in native memory and checks the outcome: a value
     * (whose text holds no canary byte run) or a {@link GatunException} that says something.
     */
    public static void decodes(byte[] message, Function<MemorySegment, Object> decoder) {
        trace(message);
        Object value;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment whole = arena.allocate(message.length + CANARY_BYTES + 1, 8);
            whole.fill(CANARY);
            whole.set(JAVA_BYTE, message.length + CANARY_BYTES, (byte) 0);
            MemorySegment.copy(message, 0, whole, JAVA_BYTE, 0, message.length);
            try {
                value = decoder.apply(whole.asSlice(0, message.length));
            } catch (GatunException e) {
                assertThat(e.getMessage()).as("the message of %s", e).isNotBlank();
                return;
            } catch (RuntimeException | Error e) {
                throw new AssertionError("decoding " + HexFormat.of().formatHex(message) + " threw " + e, e);
            }
        }
        if (value != null && String.valueOf(value).contains(CANARY_TEXT) && !new String(message,
                StandardCharsets.ISO_8859_1).contains(CANARY_TEXT)) {
            fail("decoding " + HexFormat.of().formatHex(message) + " read past the message: " + value);
        }
    }

    /**
     * With GATUN_FUZZ_TRACE=FILE, writes each message to FILE before it is decoded: when native
     * code takes the JVM down, the file holds the message that did it.
     */
    private static void trace(byte[] message) {
        String file = System.getenv("GATUN_FUZZ_TRACE");
        if (file != null) {
            try {
                Files.writeString(Path.of(file), HexFormat.of().formatHex(message) + "\n", StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.SYNC);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    public static int align(int length) {
        return (length + 3) & ~3;
    }

    /** An attribute found in a message: where its header is, and the attributes that contain it. */
    private record Node(int offset, int length, List<Integer> ancestors) {}

    private static byte[] mutateOnce(byte[] m, int attributesStart, Random random) {
        List<Node> nodes = new ArrayList<>();
        if (m.length >= attributesStart) {
            walk(m, attributesStart, Math.min(m.length, Math.max(attributesStart, claimedLength(m))), List.of(), nodes);
        }
        int op = random.nextInt(nodes.isEmpty() ? 4 : 14);
        Node n = nodes.isEmpty() ? null : nodes.get(random.nextInt(nodes.size()));
        return switch (op) {
            case 0 -> Arrays.copyOf(m, random.nextInt(m.length + 1)); // cut short, the length still claims it all
            case 1 -> withLength(Arrays.copyOf(m, random.nextInt(m.length + 1))); // cut short and told so
            case 2 -> withInt(m, 0, pick(random, 0, 1, 15, 16, 19, 20, m.length - 1, m.length + 1, m.length + 4,
                    0xffff, 0x10000, Integer.MAX_VALUE, -1)); // a message length that is wrong
            case 3 -> flip(m, random); // any byte, headers included
            case 4 -> withShort(m, n.offset(), pick(random, 0, 1, 2, 3, 4, n.length() - 1, n.length() + 1,
                    n.length() + 4, n.length() + 64, 0xffff)); // an attribute length that is wrong
            case 5 -> resize(m, n, -(n.length() - 4), random); // zero-length: the payload removed
            case 6 -> resize(m, n, 1 + random.nextInt(3), random); // an odd size, what follows misaligned
            case 7 -> resize(m, n, 4 + random.nextInt(400), random); // oversized
            case 8 -> resize(m, n, -Math.min(n.length() - 4, 1 + random.nextInt(8)), random); // undersized
            case 9 -> insert(m, n, header(n.length() + 4, random.nextInt(32) | NLA_F_NESTED), n.offset()); // nested again
            case 10 -> insert(m, n, Arrays.copyOfRange(m, n.offset(), n.offset() + align(n.length())),
                    n.offset()); // repeated
            case 11 -> remove(m, n); // removed
            case 12 -> withShort(m, n.offset() + 2, random.nextBoolean() ? random.nextInt(64)
                    : (Short.toUnsignedInt(shortAt(m, n.offset() + 2)) ^ NLA_F_NESTED)); // another type
            default -> insert(m, n, new byte[1 + random.nextInt(3)], n.offset()); // misaligned: bytes before it
        };
    }

    /** Collects the attributes in {@code m[from, to)}, and those nested in any payload that parses as attributes. */
    private static void walk(byte[] m, int from, int to, List<Integer> ancestors, List<Node> out) {
        int offset = from;
        while (offset + 4 <= to) {
            int len = Short.toUnsignedInt(shortAt(m, offset));
            if (len < 4 || offset + len > to) {
                return;
            }
            out.add(new Node(offset, len, ancestors));
            if (len >= 8 && parsesAsAttributes(m, offset + 4, offset + len)) {
                List<Integer> inner = new ArrayList<>(ancestors);
                inner.add(offset);
                walk(m, offset + 4, offset + len, inner, out);
            }
            offset += align(len);
        }
    }

    private static boolean parsesAsAttributes(byte[] m, int from, int to) {
        int offset = from;
        while (offset + 4 <= to) {
            int len = Short.toUnsignedInt(shortAt(m, offset));
            if (len < 4 || offset + len > to) {
                return false;
            }
            offset += align(len);
        }
        return offset >= to;
    }

    /** Grows (or shrinks) the payload of {@code n} by {@code delta} bytes, fixing its length and its ancestors'. */
    private static byte[] resize(byte[] m, Node n, int delta, Random random) {
        if (delta == 0) {
            return m;
        }
        int end = n.offset() + n.length();
        byte[] out;
        if (delta > 0) {
            byte[] extra = new byte[delta];
            random.nextBytes(extra);
            out = splice(m, end, 0, extra);
        } else {
            out = splice(m, end + delta, -delta, new byte[0]);
        }
        out = withShort(out, n.offset(), n.length() + delta);
        return fixAncestors(out, n, delta);
    }

    private static byte[] insert(byte[] m, Node n, byte[] bytes, int at) {
        return fixAncestors(splice(m, at, 0, bytes), n, bytes.length);
    }

    private static byte[] remove(byte[] m, Node n) {
        int size = Math.min(align(n.length()), m.length - n.offset());
        return fixAncestors(splice(m, n.offset(), size, new byte[0]), n, -size);
    }

    private static byte[] fixAncestors(byte[] m, Node n, int delta) {
        byte[] out = m;
        for (int a : n.ancestors()) {
            out = withShort(out, a, Short.toUnsignedInt(shortAt(out, a)) + delta);
        }
        return withInt(out, 0, claimedLength(out) + delta);
    }

    private static byte[] splice(byte[] m, int at, int removed, byte[] inserted) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(m, 0, at);
        out.writeBytes(inserted);
        out.write(m, at + removed, m.length - at - removed);
        return out.toByteArray();
    }

    private static byte[] header(int length, int type) {
        return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putShort((short) length).putShort((short) type).array();
    }

    private static byte[] flip(byte[] m, Random random) {
        if (m.length == 0) {
            return m;
        }
        byte[] out = m.clone();
        out[random.nextInt(out.length)] = (byte) random.nextInt(256);
        return out;
    }

    private static byte[] withLength(byte[] m) {
        return m.length >= 4 ? withInt(m, 0, m.length) : m;
    }

    private static int claimedLength(byte[] m) {
        return m.length >= 4 ? ByteBuffer.wrap(m).order(ByteOrder.nativeOrder()).getInt(0) : 0;
    }

    private static short shortAt(byte[] m, int offset) {
        return ByteBuffer.wrap(m).order(ByteOrder.nativeOrder()).getShort(offset);
    }

    private static byte[] withInt(byte[] m, int offset, int value) {
        if (m.length < offset + 4) {
            return m;
        }
        byte[] out = m.clone();
        ByteBuffer.wrap(out).order(ByteOrder.nativeOrder()).putInt(offset, value);
        return out;
    }

    private static byte[] withShort(byte[] m, int offset, int value) {
        if (m.length < offset + 2) {
            return m;
        }
        byte[] out = m.clone();
        ByteBuffer.wrap(out).order(ByteOrder.nativeOrder()).putShort(offset, (short) value);
        return out;
    }

    private static int pick(Random random, int... choices) {
        return choices[random.nextInt(choices.length)];
    }
}
