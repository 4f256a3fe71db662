package dev.gatun.testing;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Gives each test method a fresh, empty network namespace per {@link NetworkNamespace}
 * parameter, and deletes them after the test, also when it fails. Tests using it need root;
 * without it they are skipped, except with CI=true, where they fail.
 */
public final class FreshNamespaces implements ParameterResolver, BeforeEachCallback, AfterEachCallback {

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(FreshNamespaces.class);

    /** Names of test namespaces start with this, so a leak is easy to attribute. */
    public static final String PREFIX = "gatun-test-";

    @Override
    public void beforeEach(ExtensionContext context) {
        requirePrivileges();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext extension) {
        return parameter.getParameter().getType() == NetworkNamespace.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext extension) {
        requirePrivileges();
        String name = PREFIX + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet();
        NetworkNamespace ns = NamedNamespaces.create(name);
        created(extension).add(name);
        return ns;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> names = created(context);
        AssertionError failure = null;
        for (String name : names) {
            try {
                NamedNamespaces.delete(name);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = new AssertionError("could not delete test namespace " + name, e);
                }
            }
        }
        names.clear();
        if (failure != null) {
            throw failure;
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> created(ExtensionContext context) {
        return (List<String>) context.getStore(STORE).getOrComputeIfAbsent("created", k -> new ArrayList<String>());
    }

    private static final String WHY = "needs CAP_SYS_ADMIN and CAP_NET_ADMIN (run as root) to create network namespaces";

    /**
     * Skips (or, with CI=true, fails) unless this process may create and enter namespaces. Under
     * {@code ci/test --unprivileged} (system property gatun.unprivileged) it always skips, root or not.
     */
    public static void requirePrivileges() {
        String skip = skipReason();
        if (skip != null) {
            Assumptions.abort(skip);
        }
        if (!hasPrivileges()) {
            throw new AssertionError("privileged test " + WHY + "; with CI=true it fails instead of skipping");
        }
    }

    /**
     * Why a privileged test is skipped here, or null when it runs: with the privileges, or with
     * CI=true, where it fails without them.
     */
    public static String skipReason() {
        if (Boolean.getBoolean("gatun.unprivileged")) {
            return "privileged test, not run: ci/test --unprivileged runs only the tests that need no root";
        }
        if (hasPrivileges() || "true".equals(System.getenv("CI"))) {
            return null;
        }
        return "privileged test " + WHY;
    }

    static boolean hasPrivileges() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    BigInteger caps = new BigInteger(line.substring(7).strip(), 16);
                    return caps.testBit(libc_h.CAP_SYS_ADMIN) && caps.testBit(libc_h.CAP_NET_ADMIN);
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }
}
