package dev.gatun.driver.foreign;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * The legacy (x_tables) iptables tables that exist in a network namespace, as the kernel lists
 * them in {@code /proc/net/ip_tables_names} and {@code ip6_tables_names}: read without starting
 * {@code iptables-legacy-save}, which is a few processes each time. The kernel makes a table in a
 * namespace when something first uses it there, so a host that never ran legacy iptables lists
 * none (and has no file when the ip_tables module is not loaded at all).
 */
final class LegacyTables {

    private LegacyTables() {}

    /**
     * Whether legacy {@code iptables} ({@code v6}: {@code ip6tables}) has a filter table in
     * {@code namespace}; true also when the kernel's list cannot be read, so that a caller then
     * looks with the tool itself.
     */
    static boolean hasFilter(NetworkNamespace namespace, boolean v6) {
        // thread-self: the namespace of the thread that reads, which call() has switched.
        Path names = Path.of("/proc/thread-self/net", v6 ? "ip6_tables_names" : "ip_tables_names");
        return namespace.call(() -> {
            try {
                List<String> tables = Files.readAllLines(names);
                return tables.contains("filter");
            } catch (NoSuchFileException e) {
                return false;
            } catch (IOException e) {
                return true;
            }
        });
    }
}
