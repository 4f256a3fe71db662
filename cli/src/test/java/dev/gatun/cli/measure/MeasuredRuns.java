package dev.gatun.cli.measure;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The medians the measurement ITs compare, and the rows they print. */
public final class MeasuredRuns {

    private MeasuredRuns() {}

    /** The median of each side's times (nanoseconds in, milliseconds out), in the sides' order. */
    public static Map<String, Double> medians(Map<String, List<Long>> nanos) {
        return medians(nanos, null, 0);
    }

    /**
     * The medians, with a row {@code side median min max} (ms) per side appended to
     * {@code report}, the side's name padded to {@code width}.
     */
    public static Map<String, Double> medians(Map<String, List<Long>> nanos, StringBuilder report, int width) {
        Map<String, Double> medians = new LinkedHashMap<>();
        nanos.forEach((side, ns) -> {
            List<Long> sorted = ns.stream().sorted().toList();
            int mid = sorted.size() / 2;
            double median = sorted.size() % 2 == 1 ? sorted.get(mid) : (sorted.get(mid - 1) + sorted.get(mid)) / 2.0;
            medians.put(side, median / 1e6);
            if (report != null) {
                report.append(String.format("  %-" + width + "s %8.1f %8.1f %8.1f%n", side, median / 1e6,
                        sorted.getFirst() / 1e6, sorted.getLast() / 1e6));
            }
        });
        return medians;
    }
}
