package dev.gatun.internal;

import dev.gatun.MissingLibraryException;
import dev.gatun.bindings.internal.libmnl_h;
import dev.gatun.bindings.internal.libnftnl_h;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/** Checks, once each, that the shared libraries behind the bindings can be loaded. */
public final class NativeLibraries {

    private NativeLibraries() {}

    private static final class Mnl {
        static final RuntimeException MISSING = probe(libmnl_h.LIBRARY, "libmnl0");
    }

    private static final class Nftnl {
        static final RuntimeException MISSING = probe(libnftnl_h.LIBRARY, "libnftnl11");
    }

    /** Throws {@link MissingLibraryException} unless libmnl loads. */
    public static void requireNetlink() {
        if (Mnl.MISSING != null) {
            throw Mnl.MISSING;
        }
    }

    /** Throws {@link MissingLibraryException} unless libmnl and libnftnl load. */
    public static void requireNftables() {
        requireNetlink();
        if (Nftnl.MISSING != null) {
            throw Nftnl.MISSING;
        }
    }

    private static RuntimeException probe(String library, String debianPackage) {
        try {
            SymbolLookup.libraryLookup(library, Arena.global());
            return null;
        } catch (IllegalArgumentException e) {
            return new MissingLibraryException(library + " cannot be loaded; install it (on Debian or Ubuntu: apt-get install "
                    + debianPackage + ")");
        }
    }
}
