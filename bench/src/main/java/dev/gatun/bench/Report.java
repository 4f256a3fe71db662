package dev.gatun.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The table for people: per case, each tool's median, min and max, and its ratio to gatun and to the C floor. */
final class Report {

    private Report() {}

    static void table(List<Harness.Result> results, Map<String, Object> ratios, Map<String, Object> controls,
                      List<Map<String, Object>> checks, Map<String, Object> footprint, Map<String, Object> bulk,
                      Map<String, Object> freshServe, Map<String, String> method, Path svg) {
        String last = "";
        for (Harness.Result r : results) {
            // A case measured with several numbers of mappings present says which one.
            boolean severalN = results.stream().anyMatch(x -> x.caseName().equals(r.caseName()) && x.existing() != r.existing());
            String group = r.caseName() + (severalN ? ", " + r.existing() + " mappings present" : "");
            if (!group.equals(last)) {
                System.out.printf("%n%s%n  %-18s %12s %12s %12s %10s %10s%n", group, "tool", "median us", "min us", "max us",
                        "x gatun", "x C");
                last = group;
            }
            Long gatun = median(results, r.caseName(), "gatun", r.existing());
            Long c = median(results, r.caseName(), "c", r.existing());
            System.out.printf("  %-18s %12d %12d %12d %10s %10s%n", r.tool(), r.median(), Stats.min(r.samples()),
                    Stats.max(r.samples()), ratio(r.median(), gatun), ratio(r.median(), c));
        }
        System.out.println();
        ratios.forEach((k, v) -> System.out.printf("  %-38s %s%n", k, v == null ? "not measured in this run" : v));
        System.out.println();
        controls.forEach((k, v) -> System.out.printf("  %-38s %s%n", k, v == null ? "not measured in this run" : v));
        System.out.println();
        System.out.println("the served one-shot tool, by the commands its serve said it ran:");
        for (Map<String, Object> c : checks) {
            System.out.printf("  %-22s %7s mappings: %s%n", c.get("case"), c.get("existing"), c);
        }
        section("gatun serve's memory, and its repair after nft flush ruleset:", footprint);
        section("a bulk publish in one call, against the C floor's one batch:", bulk);
        section("a serve just started, its forwarded publishes against its warm figure:", freshServe);
        System.out.println();
        System.out.println("how each tool ran:");
        method.forEach((k, v) -> System.out.printf("  %s: %s%n", k, v));
        System.out.println();
        System.out.println("scale curve: " + svg);
    }

    static void section(String title, Map<String, Object> figures) {
        System.out.println();
        System.out.println(title);
        if (figures == null) {
            System.out.println("  not measured in this run");
        } else {
            figures.forEach((k, v) -> System.out.printf("  %-38s %s%n", k, v == null ? "-" : v));
        }
    }

    private static Long median(List<Harness.Result> results, String caseName, String tool, int existing) {
        return results.stream().filter(x -> x.caseName().equals(caseName) && x.tool().equals(tool)
                && x.existing() == existing).map(Harness.Result::median).findFirst().orElse(null);
    }

    private static String ratio(long a, Long b) {
        return b == null || b == 0 ? "-" : String.format("%.2f", (double) a / b);
    }
}
