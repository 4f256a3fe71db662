package dev.gatun.nft;

import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Verdict;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.MalformedReplyException;
import dev.gatun.nft.ElementCodec.Encoded;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * An element's values, checked against its set and turned into the bytes the kernel keeps
 * (concatenations padded to 32 bits, intervals as start and end elements the way nft writes
 * them), and those bytes back into nft's words.
 */
final class ElementValues {

    private ElementValues() {}

    /** Checks the elements against the set's types and turns them into what the kernel stores. */
    static List<Encoded> encode(NftSet set, List<Element> elements, boolean forDelete) {
        List<Encoded> out = new ArrayList<>();
        boolean interval = set.flags().contains(SetFlag.INTERVAL);
        for (Element e : elements) {
            String keyText = e.describeKey();
            String name = keyText + " in " + set.describe();
            if (e.key().size() != set.keyType().size()) {
                throw new InvalidInputException("element " + name + " has " + e.key().size()
                        + " key components, but the set's key type has " + set.keyType().size());
            }
            byte[] data = null;
            Verdict verdict = null;
            if (!forDelete) {
                if (set.isVerdictMap()) {
                    if (e.verdict() == null) {
                        throw new InvalidInputException("element " + name + " needs a verdict");
                    }
                    verdict = e.verdict();
                } else if (set.isMap()) {
                    if (e.data().size() != set.dataType().size()) {
                        throw new InvalidInputException("element " + name + " has " + e.data().size()
                                + " data components, but the map's data type has " + set.dataType().size());
                    }
                    data = concatenate(set.dataType(), e.data(), name);
                } else if (!e.data().isEmpty() || e.verdict() != null) {
                    throw new InvalidInputException("element " + name + " has data, but " + set.describe() + " is not a map");
                }
            }
            if (e.timeout() != null && !set.flags().contains(SetFlag.TIMEOUT)) {
                throw new InvalidInputException("element " + name + " has a timeout, but the set has no timeout flag");
            }
            if (interval) {
                byte[][] range = interval(set.keyType().getFirst(), e.key().getFirst(), name);
                out.add(new Encoded(range[0], 0, data, verdict, e.timeout(), e.comment(), keyText));
                if (range[1] != null) {
                    out.add(new Encoded(range[1], kernel_h.NFT_SET_ELEM_INTERVAL_END, null, null, null, null, keyText));
                }
            } else {
                out.add(new Encoded(concatenate(set.keyType(), e.key(), name), 0, data, verdict, e.timeout(),
                        e.comment(), keyText));
            }
        }
        if (interval && !forDelete && !out.isEmpty()) {
            // At a key two adjacent ranges share, the end of the lower one goes first, as nft sends
            // it: the kernel refuses a start followed by an end of the same key (EEXIST).
            out.sort(Comparator.comparing(Encoded::key, Arrays::compareUnsigned)
                    .thenComparing(e -> (e.flags() & kernel_h.NFT_SET_ELEM_INTERVAL_END) == 0));
            if (!new BigInteger(1, out.getFirst().key()).equals(BigInteger.ZERO)) {
                // nft opens an interval set's ranges with an end element at zero.
                out.addFirst(new Encoded(new byte[set.keyLength()], kernel_h.NFT_SET_ELEM_INTERVAL_END, null, null,
                        null, null, "the interval start"));
            }
        }
        return out;
    }

    /**
     * Checks elements given as the kernel keeps them against the set (lengths, a map's data, the
     * comment) without parsing or rendering anything; their names are rendered only for an error.
     */
    static List<Encoded> stored(NftSet set, List<StoredElement> elements, boolean forDelete) {
        List<Encoded> out = new ArrayList<>(elements.size());
        // The set's shape, worked out once: a bulk publish checks 100,000 elements against it.
        boolean wantsData = set.isMap() && !set.isVerdictMap();
        int dataLength = wantsData ? set.dataLength() : 0;
        // The elements of one owner share one comment: checked once.
        String checkedComment = null;
        for (StoredElement e : elements) {
            if (forDelete) {
                out.add(storedKey(set, e.key()));
                continue;
            }
            checkStoredKey(set, e.key());
            Encoded encoded = new Encoded(e.key(), 0, e.data(), null, null, e.comment(), null, e.counter());
            if (wantsData != (e.data() != null) || (wantsData && e.data().length != dataLength)) {
                throw new InvalidInputException("element " + encoded.label(set) + " in " + set.describe() + " needs "
                        + (wantsData ? dataLength + " bytes of data" : "no data"));
            }
            if (e.comment() != null && !e.comment().equals(checkedComment)) {
                NftNames.checkComment(() -> "element " + encoded.label(set) + " in " + set.describe(), e.comment());
                checkedComment = e.comment();
            }
            out.add(encoded);
        }
        return out;
    }

    /** A key to look up, given as the kernel keeps it: checked as {@link #stored} checks one for a delete. */
    static Encoded storedKey(NftSet set, byte[] key) {
        checkStoredKey(set, key);
        return new Encoded(key, 0, null, null, null, null, null);
    }

    private static void checkStoredKey(NftSet set, byte[] key) {
        if (set.flags().contains(SetFlag.INTERVAL)) {
            throw new InvalidInputException(set.describe() + " is an interval set: give its elements in nft's words");
        }
        if (key.length != set.keyLength()) {
            throw new InvalidInputException("a key of " + set.describe() + " is " + set.keyLength() + " bytes, not "
                    + key.length);
        }
    }

    private static byte[] concatenate(List<DataType> types, List<String> values, String name) {
        byte[][] parts = new byte[types.size()][];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = encodeOne(types.get(i), values.get(i), name).toArray();
        }
        return Concatenation.of(types, parts);
    }

    private static Bytes encodeOne(DataType type, String value, String name) {
        try {
            return type.encode(value);
        } catch (InvalidInputException e) {
            throw new InvalidInputException("element " + name + ": " + e.getMessage());
        }
    }

    /** Start and end-plus-one of a prefix, a range or a single value; end is null past the top. */
    private static byte[][] interval(DataType type, String text, String name) {
        byte[] start;
        byte[] last;
        int slash = text.indexOf('/');
        int dash = type == DataType.IPV6_ADDR ? -1 : text.indexOf('-', 1);
        if (slash > 0) {
            byte[] addr = encodeOne(type, text.substring(0, slash), name).toArray();
            int prefix = (int) DataType.parseNumber(text.substring(slash + 1), 0, addr.length * 8L, "prefix length");
            BigInteger a = new BigInteger(1, addr);
            BigInteger hostMask = BigInteger.ONE.shiftLeft(addr.length * 8 - prefix).subtract(BigInteger.ONE);
            start = toBytes(a.andNot(hostMask), addr.length);
            last = toBytes(a.or(hostMask), addr.length);
        } else if (dash > 0) {
            start = encodeOne(type, text.substring(0, dash), name).toArray();
            last = encodeOne(type, text.substring(dash + 1), name).toArray();
            if (Arrays.compareUnsigned(start, last) > 0) {
                throw new InvalidInputException("element " + name + ": the range is reversed");
            }
        } else {
            start = encodeOne(type, text, name).toArray();
            last = start;
        }
        BigInteger end = new BigInteger(1, last).add(BigInteger.ONE);
        byte[] endBytes = end.bitLength() > start.length * 8 ? null : toBytes(end, start.length);
        return new byte[][] {start, endBytes};
    }

    private static byte[] toBytes(BigInteger v, int length) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[length];
        int copy = Math.min(raw.length, length);
        System.arraycopy(raw, raw.length - copy, out, length - copy, copy);
        return out;
    }

    /** Turns stored elements back into nft's words; interval starts and ends are paired into prefixes or ranges. */
    static List<Element> decode(NftSet set, List<Encoded> stored) {
        List<Element> out = new ArrayList<>();
        if (set.flags().contains(SetFlag.INTERVAL)) {
            DataType type = set.keyType().getFirst();
            List<Encoded> sorted = new ArrayList<>(stored);
            sorted.sort(Comparator.comparing(Encoded::key, Arrays::compareUnsigned));
            for (int i = 0; i < sorted.size(); i++) {
                Encoded start = sorted.get(i);
                if ((start.flags() & kernel_h.NFT_SET_ELEM_INTERVAL_END) != 0) {
                    continue;
                }
                Encoded end = i + 1 < sorted.size() && (sorted.get(i + 1).flags() & kernel_h.NFT_SET_ELEM_INTERVAL_END) != 0
                        ? sorted.get(i + 1) : null;
                out.add(new Element(List.of(intervalText(type, start.key(), end == null ? null : end.key())),
                        dataText(set, start), start.verdict(), start.timeout(), start.comment()));
            }
            return out;
        }
        for (Encoded e : stored) {
            out.add(new Element(split(set.keyType(), e.key()), dataText(set, e), e.verdict(), e.timeout(), e.comment()));
        }
        return out;
    }

    private static List<String> dataText(NftSet set, Encoded e) {
        return e.data() == null || set.isVerdictMap() ? List.of() : split(set.dataType(), e.data());
    }

    static List<String> split(List<DataType> types, byte[] bytes) {
        if (bytes.length != NftSet.length(types)) {
            throw new MalformedReplyException("an element of " + bytes.length + " bytes is not a value of " + types);
        }
        List<String> out = new ArrayList<>();
        byte[][] values = Concatenation.split(types, bytes);
        for (int i = 0; i < values.length; i++) {
            out.add(plain(types.get(i), Bytes.wrap(values[i])));
        }
        return out;
    }

    /** A value as the element API takes it: interface names without nft's quotes. */
    private static String plain(DataType type, Bytes b) {
        String s = type.render(b);
        return type == DataType.IFNAME ? s.substring(1, s.length() - 1) : s;
    }

    private static String intervalText(DataType type, byte[] start, byte[] endPlusOne) {
        if (start.length != type.length || (endPlusOne != null && endPlusOne.length != type.length)) {
            throw new MalformedReplyException("an interval of " + start.length + " and "
                    + (endPlusOne == null ? 0 : endPlusOne.length) + " bytes is not one of " + type);
        }
        BigInteger s = new BigInteger(1, start);
        BigInteger last = endPlusOne == null
                ? BigInteger.ONE.shiftLeft(start.length * 8).subtract(BigInteger.ONE)
                : new BigInteger(1, endPlusOne).subtract(BigInteger.ONE);
        if (s.equals(last)) {
            return plain(type, Bytes.wrap(start));
        }
        BigInteger size = last.subtract(s).add(BigInteger.ONE);
        if (size.bitCount() == 1 && s.mod(size).signum() == 0) {
            int prefix = start.length * 8 - (size.bitLength() - 1);
            return plain(type, Bytes.wrap(start)) + "/" + prefix;
        }
        return plain(type, Bytes.wrap(start)) + "-" + plain(type, Bytes.wrap(toBytes(last, start.length)));
    }
}
