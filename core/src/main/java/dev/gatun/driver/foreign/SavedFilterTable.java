package dev.gatun.driver.foreign;

import dev.gatun.netns.Tool;

import java.util.List;
import java.util.Optional;

/**
 * A filter table of legacy x_tables (or of an iptables without variants), which only its own
 * tools can read and write: {@code -save} to read, one {@code -restore -w --noflush} of the
 * table to change it, so that every change applies together.
 */
final class SavedFilterTable implements FilterTable {

    private static final String WAIT_SECONDS = "30";

    private final Tool tool;
    /** "iptables-legacy", "ip6tables": the prefix of its -save and -restore. */
    private final String label;

    SavedFilterTable(Tool tool, String label) {
        this.tool = tool;
        this.label = label;
    }

    @Override
    public XtablesForward.Filter read() {
        // -save takes no lock; without -t it prints only the tables that exist (it loads none).
        return XtablesForward.Filter.parse(tool.check(label + "-save", List.of(), null, "read the filter table of " + label));
    }

    @Override
    public Optional<String> apply(XtablesForward.Filter seen, List<String> script) {
        StringBuilder text = new StringBuilder("*filter\n");
        script.forEach(l -> text.append(l).append('\n'));
        text.append("COMMIT\n");
        Tool.Result r = tool.run(label + "-restore", List.of("-w", WAIT_SECONDS, "--noflush"), text.toString());
        return r.exitCode() == 0 ? Optional.empty()
                : Optional.of(label + "-restore exited " + r.exitCode() + ": " + r.stderr().strip());
    }
}
