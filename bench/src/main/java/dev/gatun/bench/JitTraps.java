package dev.gatun.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a serve's JIT threw away once it was ready, from the serve's own log of collections and
 * deoptimizations (-Xlog:gc,deoptimization=debug): the uncommon traps its compiled code took
 * after its warm-up, one per place (method, bytecode, reason and action; a class check traps
 * some times over before its method is compiled again). Each is code the warm-up compiled for a
 * path the serve's requests left (a branch it never saw taken, a class it never saw), thrown
 * away or recompiled at a request and compiled again over the next hundreds or thousands of
 * them: the mechanism behind a fresh serve's slow early requests, counted where the timings
 * only show its effect.
 */
final class JitTraps {

    /** ServeCommand's System.gc() right after the warm-up, before the ready line; the serial collector's wording. */
    private static final String WARMED_UP = "Pause Full (System.gc())";
    /**
     * "cid=  72     level=4 pkg.Cls.method(ZS)S trap_bci=4 unstable_if reinterpret pc=0x...", and
     * in code compiled for a loop (on-stack replacement) "cid= 812 osr level=4 ... trap_bci=40
     * osr_bci=12 unstable_if reinterpret pc=0x..." (HotSpot's log_deopt).
     */
    private static final Pattern TRAP = Pattern.compile("cid=\\s*\\d+\\s+(?:osr\\s+)?level=\\d+\\s+([^\\s(]+)\\S*"
            + "\\s+trap_bci=(\\d+)\\s+(?:osr_bci=\\d+\\s+)?(\\S+)\\s+(\\S+)");

    private JitTraps() {}

    /**
     * The places trapped after the first System.gc() of {@code lines}, each once, in the order
     * first trapped ("pkg.Cls.method@bci reason action"); null when the log has no such collection
     * (a serve without its warm-up, or a log cut short), so that "none" is never said for "unknown".
     */
    static List<String> afterWarmUp(List<String> lines) {
        int from = -1;
        for (int i = 0; i < lines.size() && from < 0; i++) {
            if (lines.get(i).contains(WARMED_UP)) {
                from = i + 1;
            }
        }
        if (from < 0) {
            return null;
        }
        Set<String> trapped = new LinkedHashSet<>();
        for (String line : lines.subList(from, lines.size())) {
            Matcher m = TRAP.matcher(line);
            if (m.find()) {
                trapped.add(m.group(1) + "@" + m.group(2) + " " + m.group(3) + " " + m.group(4));
            }
        }
        return List.copyOf(trapped);
    }

    /** {@link #afterWarmUp} of the log the serve of process {@code pid} wrote in {@code dir}; null when there is none. */
    static List<String> ofServe(Path dir, long pid) {
        Path log = dir.resolve("jit-" + pid + ".log");
        if (!Files.exists(log)) {
            return null;
        }
        try {
            return afterWarmUp(Files.readAllLines(log, StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the serve's JIT log " + log, e);
        }
    }
}
