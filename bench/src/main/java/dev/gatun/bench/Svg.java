package dev.gatun.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/** The scale curve as an SVG line chart: median cost of one more publish against mappings present, log scale. */
final class Svg {

    /** One per tool of the interleaved cases (eleven since a bare process start runs among them), none repeated. */
    private static final String[] COLORS = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
            "#1f78b4", "#666666", "#e31a1c", "#000000"};

    private Svg() {}

    static String scaleCurve(List<Harness.Result> publish) {
        int w = 760;
        int h = 420;
        int left = 80;
        int right = 170;
        int top = 40;
        int bottom = 60;
        List<Integer> xs = new ArrayList<>(new TreeSet<>(publish.stream().map(Harness.Result::existing).toList()));
        Map<String, Map<Integer, Long>> lines = new LinkedHashMap<>();
        for (Harness.Result r : publish) {
            lines.computeIfAbsent(r.tool(), t -> new LinkedHashMap<>()).put(r.existing(), Math.max(1, r.median()));
        }
        double lo = Math.floor(Math.log10(publish.stream().mapToLong(r -> Math.max(1, r.median())).min().orElse(1)));
        double hi = Math.ceil(Math.log10(publish.stream().mapToLong(r -> Math.max(1, r.median())).max().orElse(10)));
        if (hi <= lo) {
            hi = lo + 1;
        }
        StringBuilder s = new StringBuilder();
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(w).append("\" height=\"").append(h)
                .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append("<text x=\"").append(left).append("\" y=\"24\" font-size=\"15\">Cost of one more publish (median, microseconds, log scale)</text>\n");
        double plotW = w - left - right;
        double plotH = h - top - bottom;
        for (double d = lo; d <= hi; d++) {
            double y = top + plotH - (d - lo) / (hi - lo) * plotH;
            s.append(String.format("<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", left, y, left + plotW, y));
            s.append(String.format("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", left - 6, y + 4,
                    formatMicros(Math.pow(10, d))));
        }
        for (int i = 0; i < xs.size(); i++) {
            double x = left + (xs.size() == 1 ? plotW / 2 : i * plotW / (xs.size() - 1));
            s.append(String.format("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%,d</text>%n", x, h - bottom + 20, xs.get(i)));
        }
        s.append(String.format("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">mappings present</text>%n", left + plotW / 2,
                h - 16));
        int c = 0;
        for (var e : lines.entrySet()) {
            String color = COLORS[c % COLORS.length];
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < xs.size(); i++) {
                Long v = e.getValue().get(xs.get(i));
                if (v == null) {
                    continue;
                }
                double x = left + (xs.size() == 1 ? plotW / 2 : i * plotW / (xs.size() - 1));
                double y = top + plotH - (Math.log10(v) - lo) / (hi - lo) * plotH;
                points.append(String.format("%.1f,%.1f ", x, y));
                s.append(String.format("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n", x, y, color));
            }
            s.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"").append(color).append("\" points=\"")
                    .append(points.toString().strip()).append("\"/>\n");
            s.append(String.format("<text x=\"%.1f\" y=\"%d\" fill=\"%s\">%s</text>%n", left + plotW + 12, top + 16 * (c + 1), color,
                    e.getKey()));
            c++;
        }
        s.append("</svg>\n");
        return s.toString();
    }

    private static String formatMicros(double us) {
        if (us >= 1_000_000) {
            return String.format("%.0f s", us / 1_000_000);
        }
        if (us >= 1000) {
            return String.format("%.0f ms", us / 1000);
        }
        return String.format("%.0f us", us);
    }
}
