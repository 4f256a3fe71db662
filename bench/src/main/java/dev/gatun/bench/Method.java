package dev.gatun.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** How each tool was run and timed: printed with every report, so no ratio is read without its method. */
final class Method {

    private Method() {}

    static Map<String, String> describe(int contention, long serveWarmUpMs) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("gatun, java-floor", "in a JVM of their own per case, warm (publishing until the JIT is idle), driven over a"
                + " pipe; each publish timed inside that JVM");
        m.put("c", "the C floor, one process per case, driven over a pipe; each publish timed inside it");
        m.put("c-commit, c-commit-heard", "the C floor's commit of a publish alone (one batch guarded by the generation"
                + " it made last), timed as c; c-commit-heard while a thread of the same program listens to the"
                + " namespace's nftables notifications and decodes them, as gatun-followed's notification reader does");
        m.put("nft, iptables-nft, iptables-legacy, docker-nft-shape, gatun-cli, gatun-served, gatun-client", "as their users run them, from a process"
                + " already inside the namespace: run_timed (bench/src/main/c), started once per tool and case in the"
                + " tool's namespace, looks each tool up on PATH before its clock starts, then spawns it directly"
                + " (posix_spawn, as Go's os/exec under dockerd), writes its input, reads its output until it closes and"
                + " reaps it; the interval is that and nothing else (no nsenter, no JVM process launcher). iptables"
                + " Docker style: for each of a port's three rules -C then -A, each its own process, with -w;"
                + " ./gatun publish without --netns, as a script on the host runs it");
        m.put("gatun-served", "./gatun publish run exactly as gatun-cli, with ./gatun --netns NS serve (as its users run it, no request log)"
                + " running for the tool's namespace, so that the launcher's C client forwards it and no JVM starts. The"
                + " serve starts after the mappings are in place and is brought to a long-running serve's steady state as"
                + " gatun in-process is: the samples' command line (and its unpublish) sent on its socket as the client"
                + " sends it, on other ports, until its JIT is idle or for at most " + serveWarmUpMs + " ms"
                + (serveWarmUpMs < 5_000 ? " (the quick run's: a serve that has barely started, several ms slower per"
                + " command than a warm one)" : "") + " (served_checks: requests and waits);"
                + " then the unmeasured round, which warms the launcher and the client as it warms every process tool. It"
                + " stops with SIGTERM after the case and must exit 0 and remove its socket, and the commands it says it ran"
                + " when it stops must be every one sent to it, none exiting other than 0, or the run fails: one that fell"
                + " back to a JVM is never reported as served");
        m.put("gatun-client", "a control for gatun-served, run and checked the same way with a serve of its own: the C"
                + " client alone (cli/target/gatun-client publish ..., what the launcher runs first), so that gatun-served"
                + " splits into the launcher's sh (up to its exec of the client) and what the client and the serve cost; interleaved cases only");
        m.put("serve footprint", "a serve in a fresh namespace with one network: VmRSS and VmHWM from /proc/PID/status"
                + " once its CPU is idle (idle_rss_when_quiet_kb), and idle_rss_kb the median of samples a second apart from"
                + " 8 s after that (6 and three samples in the quick run: the JVM frees its compilers' arenas up to 5 s after"
                + " their last compilation, glibc returns freed memory at its next trim, every 2 s); right after two ./gatun publish calls through it (a tcp and a udp range, half"
                + " the mappings each), and some seconds later; then nft flush ruleset run in the namespace and the"
                + " milliseconds until the first and last mapping of each protocol are back, each asked with one netlink"
                + " lookup from the harness once a millisecond (nft get element reads the whole map, a second with 100,000"
                + " elements); three times, each once the serve is quiet again (heal_after_flush_samples_ms); the first,"
                + " which also links what a repair needs, is heal_after_flush_ms and the one the target judges");
        m.put("bulk publish", "in one namespace with gatun's table, in turn (the first alternating by round, one unmeasured"
                + " round each, then a wait until the harness's JIT is idle): gatun's driver in the harness's JVM publishing all the mappings in one call (half tcp,"
                + " half udp, ports from 1), and the C floor sending the same elements in one batch (publish_ref 'bulk':"
                + " no lookups, NEWSETELEM messages of at most 64 KiB); nft flush map before each, unmeasured");
        m.put("control-process", "true run and timed the same way (the least any one-process call costs), the same"
                + " through nsenter --net=NS, and as the earlier method ran every call of nft, iptables and the Docker"
                + " nftables shape (nsenter --net=NS started and timed from the harness's JVM); controls: what each"
                + " added per call. The same bare true also runs among the tools of every publish case (tool true), as"
                + " cold as they run: the process tools' ratios to a process start (client_over_process_start) take it");
        m.put("warm-up", "every tool gets one unmeasured round before the samples of a case, at every number of mappings");
        m.put("contention", "every tool makes " + contention + " separate one-port publishes in a row (none batched), after"
                + " one unmeasured publish; the result is the sum of their times as each tool's timer took them");
        return m;
    }
}
