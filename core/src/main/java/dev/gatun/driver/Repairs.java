package dev.gatun.driver;

import dev.gatun.nft.RulesetEvent;

import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;

/**
 * Putting back what someone else removed of a driver's packet-filter state (a flushed ruleset,
 * a firewall reload). Only the {@link Healer} of a {@link SelfHealingDriver} calls these.
 */
public interface Repairs {

    /**
     * Puts back the static ruleset, every network's entries, what the driver added to other
     * firewalls, and those of {@code mappings} that are missing and whose host port nobody else
     * holds now. Returns one line per thing put back; empty when everything was in place.
     */
    List<String> repair(List<PortMapping> mappings);

    /**
     * As {@link #repair}, but only the driver's own ruleset, not what it added to other
     * firewalls: for a caller that knows only gatun's table changed.
     */
    List<String> repairOwnRuleset(List<PortMapping> mappings);

    /**
     * As {@link #repairOwnRuleset}, for a caller that knows only elements of the named sets of
     * the driver's own table were removed: a driver that can reads just those sets.
     */
    List<String> repairElements(Collection<String> sets, List<PortMapping> mappings);

    /**
     * As {@link #repair}, but only what the driver added to other firewalls, not its own
     * ruleset: for a caller that learns of changes to its own ruleset in other ways.
     */
    List<String> repairOtherFirewalls();

    /**
     * Whether what {@link #repairOtherFirewalls} keeps in place can change without an nftables
     * notification (legacy iptables sends none), so that a caller who watches those must still
     * look now and then. True when the driver cannot tell.
     */
    boolean otherFirewallsNeedPolling();

    /**
     * For a process that hears every nftables notification of the driver's namespace (as the
     * healer does): the driver plans publishes from memory kept in step with them, and commits
     * each in one round trip instead of reading first. The returned consumer must be handed
     * every notification, in order, from before the next publish on (memory is read at it).
     * Null if the driver cannot (legacy iptables sends none); it then reads, as it does until
     * this is called.
     */
    Consumer<RulesetEvent> followRuleset();
}
