package dev.gatun.cli.testing;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.Oracle;

import java.time.Duration;
import java.util.stream.Collectors;

/**
 * Shows that a serve has acted on every nftables change committed before now, so that a check
 * that something did not happen (a removal not put back) is made once the serve had its chance,
 * not after a sleep that guesses how long that takes. It deletes, behind the serve's back, a
 * mapping the serve holds (the sentinel) and waits until the serve's repair puts it back. The
 * serve hears changes in commit order and a repair of a map re-adds every mapping it still wants
 * there: a removal the serve wrongly took for damage is back by the time the sentinel is.
 */
public final class RepairWitness {

    /** The sentinel's owner: the serve's log names it in the lines of its repairs. */
    public static final String OWNER = "repair-witness";
    /** Longer than a repair takes on a loaded machine (it comes within a second). */
    private static final Duration LIMIT = Duration.ofSeconds(30);

    private final NetworkNamespace ns;
    private final int hostPort;

    private RepairWitness(NetworkNamespace ns, int hostPort) {
        this.ns = ns;
        this.hostPort = hostPort;
    }

    /**
     * Publishes the sentinel, {@code hostPort}/tcp to {@code containerIp} on {@code network}
     * (through the serve when one runs, else in a JVM), and returns once nft lists it.
     */
    public static RepairWitness publish(NetworkNamespace ns, String network, String containerIp, int hostPort) {
        GatunCli.ok("--netns", ns.name(), "publish", network, containerIp, "-p", hostPort + ":" + hostPort, "--owner", OWNER);
        RepairWitness w = new RepairWitness(ns, hostPort);
        if (!w.listed()) {
            throw new AssertionError("the sentinel tcp . " + hostPort + " is not in gatun's map after its publish");
        }
        return w;
    }

    private boolean listed() {
        return Oracle.in(ns, "nft", "list", "map", "inet", "gatun", "ports4").contains("tcp . " + hostPort + " "); // then its comment or value
    }

    /** Deletes the sentinel with nft and waits until {@code serve} has put it back; fails with the serve's log if it does not. */
    public void awaitRepair(GatunServe serve) {
        Oracle.in(ns, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . " + hostPort + " }");
        try {
            Bounded.until(LIMIT, "the serve's repair of the sentinel tcp . " + hostPort + " deleted behind its back", this::listed);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; serve's log:\n" + serve.stderr(), e);
        }
    }

    /** {@code log} without the lines of the sentinel's repairs, which a witness causes on purpose. */
    public static String withoutSentinel(String log) {
        return log.lines().filter(l -> !l.contains("owner " + OWNER)).collect(Collectors.joining("\n"));
    }
}
