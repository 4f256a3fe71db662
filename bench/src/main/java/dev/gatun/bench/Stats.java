package dev.gatun.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Median, minimum and maximum of samples in microseconds. */
final class Stats {

    private Stats() {}

    static long median(List<Long> samples) {
        List<Long> s = new ArrayList<>(samples);
        Collections.sort(s);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    static long min(List<Long> samples) {
        return Collections.min(samples);
    }

    static long max(List<Long> samples) {
        return Collections.max(samples);
    }
}
