package dev.gatun.driver.bridge;

/** For tests outside the package: the ruleset shape of kernels that refuse key-only map lookups, forced. */
public final class GatunRulesetShapes {

    private GatunRulesetShapes() {}

    public static void useKeyOnlyLookups(boolean keyOnly) {
        GatunRuleset.useKeyOnlyLookups(keyOnly);
    }
}
