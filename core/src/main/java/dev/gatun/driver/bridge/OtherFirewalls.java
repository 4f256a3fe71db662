package dev.gatun.driver.bridge;

import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.driver.foreign.ForeignFirewalls;

import java.util.ArrayList;
import java.util.List;

/**
 * Other tools' firewalls as gatun's bridges need them opened (see {@link ForeignFirewalls}),
 * made at first use: a publish never needs them, and looking for them runs programs.
 */
final class OtherFirewalls {

    private final Firewall firewall;
    private final StandingWarnings warnings = new StandingWarnings();
    private ForeignFirewalls foreign;

    OtherFirewalls(Firewall firewall) {
        this.firewall = firewall;
    }

    /**
     * Opens other firewalls for {@code bridges} (none: removes what gatun added); returns what
     * changed. A failure does not undo the caller's work: it is logged, and the doctor reports it.
     * A serve opens them at every change of another firewall, and some change their rules all
     * day: what stands in the way is logged when it first does, not at each of those.
     */
    List<String> open(List<String> bridges) {
        ForeignFirewalls.Opened opened = foreign().open(bridges);
        List<String> now = new ArrayList<>();
        opened.failures().forEach(f -> now.add("other firewalls may drop traffic of gatun's networks: " + f));
        now.addAll(opened.unopened());
        for (String warning : warnings.fresh(now)) {
            System.getLogger("dev.gatun").log(System.Logger.Level.WARNING, warning);
        }
        return opened.changed();
    }

    /** Forgets what was opened for a bridge that is gone. */
    void release(String bridge) {
        foreign().release(bridge);
    }

    /** Every drop of another firewall that gatun's bridges meet, and whether they get through it. */
    List<ForeignDrop> survey(List<String> bridges) {
        return foreign().survey(bridges);
    }

    /** Whether they can change unnoticed by nftables notifications (see {@link ForeignFirewalls#needPolling}). */
    boolean needPolling() {
        return foreign().needPolling();
    }

    private synchronized ForeignFirewalls foreign() {
        if (foreign == null) {
            foreign = firewall.foreignFirewalls();
        }
        return foreign;
    }
}
