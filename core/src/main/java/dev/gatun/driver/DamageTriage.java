package dev.gatun.driver;

import dev.gatun.nft.RulesetEvent;

/**
 * What an nftables notification may have damaged, judged from the notification alone. In
 * gatun's own table a removal of elements marks only their set; any other removal there, or a
 * rule added, the whole table. In other tables only changes to tables, chains, rules and sets
 * matter (they are where gatun's jump and the drops it opens live): elements another tool adds
 * or removes in its own sets, perhaps thousands a second, damage nothing.
 */
final class DamageTriage {

    static final String OWN_TABLE = "gatun";

    private DamageTriage() {}

    /**
     * What {@code e} may have damaged, or null when nothing. Whether this process made the
     * change is not asked here: that looks under /proc, so the healer asks it last.
     *
     * @param kind        why a repair runs, to count by
     * @param cause       why, in words
     * @param own         whether it is gatun's own table
     * @param overrun     notifications were lost: what is gone cannot be told
     * @param elementsOf  the set whose elements were removed, or null
     * @param ownRemoval  something of gatun's table was removed, or a rule added to it
     * @param foreign     another table's tables, chains, rules or sets changed
     */
    record Damage(HealListener.Cause kind, String cause, boolean own, boolean overrun, String elementsOf,
                  boolean ownRemoval, boolean foreign) {}

    static Damage of(RulesetEvent e) {
        boolean overrun = e.kind() == RulesetEvent.Kind.OVERRUN;
        boolean own = OWN_TABLE.equals(e.table());
        boolean foreign = overrun || e.table() != null && !own && switch (e.kind()) {
            case NEW_ELEMENTS, DELETE_ELEMENTS, NEW_GENERATION -> false;
            default -> true;
        };
        // A rule someone added to gatun's chains changes what they do as much as one removed.
        boolean ownRemoval = own && (e.isRemoval() || e.kind() == RulesetEvent.Kind.NEW_RULE);
        if (!foreign && !ownRemoval) {
            return null;
        }
        HealListener.Cause kind = overrun ? HealListener.Cause.EVENTS_LOST
                : own ? HealListener.Cause.OWN_TABLE : HealListener.Cause.OTHER_TABLE;
        String cause = overrun ? "nftables notifications were lost"
                : (own ? "gatun's table" : "table " + e.family() + " " + e.table()) + " changed by another process";
        String elementsOf = ownRemoval && e.kind() == RulesetEvent.Kind.DELETE_ELEMENTS ? e.name() : null;
        return new Damage(kind, cause, own, overrun, elementsOf, ownRemoval, foreign);
    }
}
