package dev.gatun.nft;

/**
 * A change to the ruleset that the kernel announced: what happened to which object. For
 * elements, {@code name} is the set. OVERRUN means notifications were lost: read the ruleset
 * again.
 */
public record RulesetEvent(Kind kind, Family family, String table, String name) {

    public enum Kind {
        NEW_TABLE, DELETE_TABLE, NEW_CHAIN, DELETE_CHAIN, NEW_RULE, DELETE_RULE, NEW_SET, DELETE_SET,
        NEW_ELEMENTS, DELETE_ELEMENTS, NEW_GENERATION, OVERRUN
    }

    /** Whether this event removed something. */
    public boolean isRemoval() {
        return switch (kind) {
            case DELETE_TABLE, DELETE_CHAIN, DELETE_RULE, DELETE_SET, DELETE_ELEMENTS -> true;
            default -> false;
        };
    }
}
