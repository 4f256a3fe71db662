package dev.gatun.driver;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Equal values held once, each under a small int id, for as long as something holds it: every
 * {@link #acquire} counts one more holder and every {@link #release} one fewer, and a value no
 * one holds is forgotten and its id reused. So values that come and go (owners, containers)
 * leave nothing behind, as an intern table that only grows would. Not thread-safe.
 */
final class SharedValues<T> {

    private final Map<T, Integer> ids = new HashMap<>();
    /** By id; null where the id is free. */
    private final List<T> values = new ArrayList<>();
    private int[] holders = new int[8];
    private int[] freeIds = new int[8];
    private int free;

    /** The id of {@code value} (null is a value too), held once more. */
    int acquire(T value) {
        Integer known = ids.get(value);
        if (known != null) {
            holders[known]++;
            return known;
        }
        int id;
        if (free > 0) {
            id = freeIds[--free];
            values.set(id, value);
        } else {
            id = values.size();
            values.add(value);
            if (id == holders.length) {
                holders = Arrays.copyOf(holders, id * 2);
            }
        }
        holders[id] = 1;
        ids.put(value, id);
        return id;
    }

    /** The id {@code value} is held under, or -1 when nothing holds it; holds nothing more. */
    int idOf(T value) {
        Integer id = ids.get(value);
        return id == null ? -1 : id;
    }

    T get(int id) {
        if (id < 0 || id >= values.size() || holders[id] == 0) {
            throw new IllegalArgumentException("no value is held under id " + id);
        }
        return values.get(id);
    }

    /** One holder of {@code id} lets go; the last one's going forgets the value. */
    void release(int id) {
        T value = get(id);
        if (--holders[id] > 0) {
            return;
        }
        ids.remove(value);
        values.set(id, null);
        if (free == freeIds.length) {
            freeIds = Arrays.copyOf(freeIds, free * 2);
        }
        freeIds[free++] = id;
    }

    /** How many distinct values are held. */
    int size() {
        return ids.size();
    }

    /** How many ids are in use or free to reuse: what a table that only grew would have had to keep. */
    int idsMade() {
        return values.size();
    }
}
