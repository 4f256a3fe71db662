package dev.gatun.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** How each tool was run and timed: printed with every report, so no ratio is read without its method. */
final class Method {

    private Method() {}

    static Map<String, String> describe(int contention) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("gatun, java-floor", "in a JVM of their own per case, warm (publishing until the JIT is idle), driven over a"
                + " pipe; each publish timed inside that JVM");
        m.put("c", "the C floor, one process per case, driven over a pipe; each publish timed inside it");
        m.put("nft, iptables-nft, iptables-legacy, docker-nft-shape, gatun-cli", "as their users run them, from a process"
                + " already inside the namespace: run_timed (bench/src/main/c), started once per tool and case in the"
                + " tool's namespace, looks each tool up on PATH before its clock starts, then spawns it directly"
                + " (posix_spawn, as Go's os/exec under dockerd), writes its input, reads its output until it closes and"
                + " reaps it; the interval is that and nothing else (no nsenter, no JVM process launcher). iptables"
                + " Docker style: for each of a port's three rules -C then -A, each its own process, with -w;"
                + " ./gatun publish without --netns, as a script on the host runs it");
        m.put("control-process", "true run and timed the same way (the least any one-process call costs), the same"
                + " through nsenter --net=NS, and as the earlier method ran every call of nft, iptables and the Docker"
                + " nftables shape (nsenter --net=NS started and timed from the harness's JVM); controls: what each"
                + " added per call");
        m.put("warm-up", "every tool gets one unmeasured round before the samples of a case, at every number of mappings");
        m.put("contention", "every tool makes " + contention + " separate one-port publishes in a row (none batched), after"
                + " one unmeasured publish; the result is the sum of their times as each tool's timer took them");
        return m;
    }
}
