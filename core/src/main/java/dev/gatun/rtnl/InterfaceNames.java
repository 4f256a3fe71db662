package dev.gatun.rtnl;

import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;

import java.nio.charset.StandardCharsets;

/** The kernel's rules for interface names, checked before anything is sent. */
public final class InterfaceNames {

    /** Longest name in bytes: IFNAMSIZ includes the terminating NUL. */
    public static final int MAX_BYTES = kernel_h.IFNAMSIZ - 1;

    private InterfaceNames() {}

    public static String check(String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidInputException("interface name must not be empty");
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_BYTES) {
            throw new InvalidInputException("interface name '" + name + "' is " + bytes + " bytes long; at most "
                    + MAX_BYTES + " fit");
        }
        if (name.equals(".") || name.equals("..")) {
            throw new InvalidInputException("interface name '" + name + "' is not allowed");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/' || c == ':' || Character.isWhitespace(c) || Character.isISOControl(c)) {
                throw new InvalidInputException("interface name '" + name.replaceAll("\\p{Cntrl}", "?")
                        + "' must not contain '/', ':', whitespace or control characters");
            }
        }
        return name;
    }
}
