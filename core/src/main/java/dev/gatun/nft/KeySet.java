package dev.gatun.nft;

import java.util.Arrays;

/**
 * Keys of one width, as the kernel keeps a set's or map's keys, held compactly: every key in one
 * byte array (open addressing), so that telling which of 100,000 keys a map holds costs about a
 * megabyte rather than an object or two per key. Not thread-safe.
 */
public final class KeySet {

    private final int width;
    /** {@code capacity * width} bytes: slot i holds bytes [i * width, (i + 1) * width). */
    private byte[] keys;
    private boolean[] used;
    private int size;

    /** An empty set of keys of {@code width} bytes. */
    public KeySet(int width) {
        if (width <= 0) {
            throw new IllegalArgumentException("a key has at least one byte, not " + width);
        }
        this.width = width;
        allocate(16);
    }

    public int width() {
        return width;
    }

    public int size() {
        return size;
    }

    /** Adds {@code key}; false if it was there already. */
    public boolean add(byte[] key) {
        check(key);
        if ((size + 1) * 2 > used.length) {
            grow();
        }
        int slot = find(key);
        if (used[slot]) {
            return false;
        }
        put(slot, key);
        return true;
    }

    public boolean contains(byte[] key) {
        check(key);
        return used[find(key)];
    }

    /** The slot holding {@code key}, or the free slot where it would go. At most half the slots are used. */
    private int find(byte[] key) {
        int mask = used.length - 1;
        for (int slot = hash(key) & mask; ; slot = (slot + 1) & mask) {
            if (!used[slot] || Arrays.equals(keys, slot * width, slot * width + width, key, 0, width)) {
                return slot;
            }
        }
    }

    private void put(int slot, byte[] key) {
        System.arraycopy(key, 0, keys, slot * width, width);
        used[slot] = true;
        size++;
    }

    private void grow() {
        byte[] oldKeys = keys;
        boolean[] oldUsed = used;
        allocate(oldUsed.length * 2);
        byte[] key = new byte[width];
        for (int i = 0; i < oldUsed.length; i++) {
            if (oldUsed[i]) {
                System.arraycopy(oldKeys, i * width, key, 0, width);
                put(find(key), key);
            }
        }
    }

    private void allocate(int capacity) {
        if ((long) capacity * width > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("too many keys of " + width + " bytes: " + size);
        }
        keys = new byte[capacity * width];
        used = new boolean[capacity];
        size = 0;
    }

    private void check(byte[] key) {
        if (key.length != width) {
            throw new IllegalArgumentException("a key of this set is " + width + " bytes, not " + key.length);
        }
    }

    private static int hash(byte[] key) {
        int h = Arrays.hashCode(key);
        // Spread the bits: keys differ mostly in their last bytes (a port), which the low bits see least.
        h *= 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
