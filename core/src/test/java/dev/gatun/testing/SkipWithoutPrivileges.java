package dev.gatun.testing;

import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

/**
 * {@link FreshNamespaces#requirePrivileges()}'s rule for a jqwik container that needs root: an
 * assumption aborted in its {@code @BeforeContainer} is an error in jqwik, not a skip. Skipped
 * where FreshNamespaces would skip; with CI=true it runs, and its requirePrivileges fails.
 */
public final class SkipWithoutPrivileges implements SkipExecutionHook {

    @Override
    public SkipResult shouldBeSkipped(LifecycleContext context) {
        String why = FreshNamespaces.skipReason();
        return why == null ? SkipResult.doNotSkip() : SkipResult.skip(why);
    }
}
