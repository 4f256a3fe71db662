package dev.gatun.cli.cni;

import java.util.List;

/** The versions of the CNI spec gatun speaks, and what each allows. */
public final class CniVersion {

    public static final String LATEST = "1.1.0";
    /** Oldest first: 0.3.0 is the first with the result format gatun prints. */
    public static final List<String> SUPPORTED = List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");

    private CniVersion() {}

    public static boolean isSupported(String version) {
        return SUPPORTED.contains(version);
    }

    /** Whether {@code version} is at least {@code least} (both supported). */
    public static boolean atLeast(String version, String least) {
        return SUPPORTED.indexOf(version) >= SUPPORTED.indexOf(least);
    }

    /** Results before 1.0.0 give each address its IP version ("4" or "6"). */
    static boolean ipsHaveVersion(String version) {
        return !atLeast(version, "1.0.0");
    }
}
