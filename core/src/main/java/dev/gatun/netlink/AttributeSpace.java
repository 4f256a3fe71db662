package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The names of one of the kernel's attribute enums (all NFTA_CHAIN_*, say), taken from the
 * generated bindings by prefix, and which of its attributes nest another enum. Used only to
 * name an attribute the kernel rejected, so it is built on the error path, never on a hot one.
 *
 * <p>A prefix also matches the enums nested under it (NFTA_SET_ matches NFTA_SET_ELEM_KEY): an
 * enum that has an X_UNSPEC of its own, or one listed as excluded, is left out; a value that two
 * remaining names share gets no name, since a wrong name is worse than a number.
 */
final class AttributeSpace {

    private final Map<Integer, String> names;
    private final Map<Integer, Supplier<AttributeSpace>> nested = new HashMap<>();

    private AttributeSpace(Map<Integer, String> names) {
        this.names = names;
    }

    /** The enum whose names start with {@code prefix}, without those starting with an {@code excluded} prefix. */
    static AttributeSpace of(String prefix, String... excluded) {
        Map<String, Integer> constants = Constants.ALL;
        Set<String> inner = new HashSet<>(List.of(excluded));
        for (String name : constants.keySet()) {
            if (name.startsWith(prefix) && name.endsWith("_UNSPEC") && name.length() > prefix.length() + "UNSPEC".length()) {
                inner.add(name.substring(0, name.length() - "UNSPEC".length()));
            }
        }
        Integer max = constants.get(prefix + "MAX");
        Map<Integer, String> names = new HashMap<>();
        Set<Integer> shared = new HashSet<>();
        constants.forEach((name, value) -> {
            if (!name.startsWith(prefix) || name.endsWith("_UNSPEC") || name.endsWith("_MAX")
                    || (max != null && value > max) || inner.stream().anyMatch(name::startsWith)) {
                return;
            }
            if (names.putIfAbsent(value, name) != null) {
                shared.add(value);
            }
        });
        shared.forEach(names::remove);
        return new AttributeSpace(names);
    }

    /** Says that attribute {@code type} of this enum holds attributes of {@code inner}. */
    AttributeSpace nest(int type, Supplier<AttributeSpace> inner) {
        nested.put(type, inner);
        return this;
    }

    /** The name of {@code type}, or null when the bindings have none for it. */
    String name(int type) {
        return names.get(type);
    }

    /** The enum that attribute {@code type} holds, or null when it holds a value (or gatun does not know). */
    AttributeSpace inner(int type) {
        Supplier<AttributeSpace> s = nested.get(type);
        return s == null ? null : s.get();
    }

    /** A list of attributes of {@code element}, each an NFTA_LIST_ELEM, as nftables nests expressions and elements. */
    static AttributeSpace listOf(Supplier<AttributeSpace> element) {
        return of("NFTA_LIST_").nest(kernel_h.NFTA_LIST_ELEM, element);
    }

    /** Every int constant of the bindings by name, read once when the first error needs them. */
    private static final class Constants {
        static final Map<String, Integer> ALL = read();

        private static Map<String, Integer> read() {
            Map<String, Integer> all = new LinkedHashMap<>();
            for (Field f : kernel_h.class.getFields()) {
                if (f.getType() == int.class && Modifier.isStatic(f.getModifiers())) {
                    try {
                        all.put(f.getName(), f.getInt(null));
                    } catch (IllegalAccessException e) {
                        throw new IllegalStateException("the bindings' constant " + f.getName() + " is not readable", e);
                    }
                }
            }
            return all;
        }
    }
}
