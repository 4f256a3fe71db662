package dev.gatun.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The order in which the tools take their turns, round after round. What ran just before a
 * sample sets how cold it runs (a new JVM leaves the caches far colder than the C program), so
 * every tool must follow every other tool equally often, or the medians compare different
 * conditions: a shuffle with a fixed seed had gatun follow iptables-legacy seven times in 31
 * rounds and the C program never. A balanced Latin square (Williams design) gives each ordered
 * pair of tools exactly once in {@code n} rounds ({@code 2n} for an odd number of tools).
 */
final class RoundOrders {

    private RoundOrders() {}

    /** The rounds of one balanced cycle for {@code n} tools: each a permutation of 0..n-1. */
    static List<int[]> cycle(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("no tools to order: " + n);
        }
        // First row 0, 1, n-1, 2, n-2, ...; row r adds r to each entry, modulo n.
        int[] first = new int[n];
        for (int j = 1; j < n; j++) {
            first[j] = j % 2 == 1 ? (j + 1) / 2 : n - j / 2;
        }
        List<int[]> rows = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int[] row = new int[n];
            for (int j = 0; j < n; j++) {
                row[j] = (first[j] + r) % n;
            }
            rows.add(row);
        }
        if (n % 2 == 1) {
            // With an odd count one square gives each pair once one way; its mirror adds the other.
            for (int r = 0; r < n; r++) {
                int[] row = rows.get(r);
                int[] mirrored = new int[n];
                for (int j = 0; j < n; j++) {
                    mirrored[j] = row[n - 1 - j];
                }
                rows.add(mirrored);
            }
        }
        return rows;
    }

    /** {@code wanted} rounded up to whole cycles, so no pair of tools is left short. */
    static int rounds(int wanted, int tools) {
        int cycle = cycle(tools).size();
        return (wanted + cycle - 1) / cycle * cycle;
    }
}
