package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.nft.expr.Opaque;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Writes an expression gatun does not decode so that a person sees what it is, and so that nft
 * refuses the line rather than read it as another rule. An nft comment would not do: {@code #}
 * runs to the end of the line, and nft applies what stands before it, a rule without its
 * xtables match and without the statements after it.
 * <ul>
 * <li>xtables (what iptables-nft wrote): {@code xt match conntrack}, {@code xt target DNAT}, as
 * nft lists those it cannot translate. nft's grammar has this statement only to refuse it
 * ("unsupported xtables compat expression, use iptables-nft with this ruleset"). The name is
 * not quoted: nft 1.0.6 takes only a bare word there; where the name is an nft keyword
 * ({@code comment}) it refuses the line with a plain syntax error instead.
 * <li>any other: the kind and its netlink attributes by number, in hex, between backquotes:
 * {@code `limit 1=0x000000000000000a 2=0x0000000000000001`}, nested ones in braces. nft's
 * scanner has no token with a backquote, so no line holding one parses.
 * </ul>
 */
final class OpaqueRenderer {

    /** Names of xtables extensions are short words; anything else is written the generic way. */
    private static final Pattern XT_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,29}");

    private OpaqueRenderer() {}

    static String render(Opaque o) {
        String xt = xtName(o);
        if (xt != null) {
            return "xt " + o.kind() + " " + xt;
        }
        return "`" + o.kind() + attributes(o.attributes()) + "`";
    }

    /** The extension's name (iptables' -m NAME or -j NAME) of a match or target, or null. */
    private static String xtName(Opaque o) {
        if (!o.isXtables()) {
            return null;
        }
        int nameType = o.kind().equals("match") ? kernel_h.NFTA_MATCH_NAME : kernel_h.NFTA_TARGET_NAME;
        for (Opaque.Attribute a : o.attributes()) {
            if (a.type() == nameType && !a.nested()) {
                byte[] raw = a.value().toArray();
                int end = 0;
                while (end < raw.length && raw[end] != 0) {
                    end++;
                }
                String name = new String(raw, 0, end, StandardCharsets.UTF_8);
                return XT_NAME.matcher(name).matches() ? name : null;
            }
        }
        return null;
    }

    private static String attributes(List<Opaque.Attribute> attributes) {
        StringBuilder s = new StringBuilder();
        for (Opaque.Attribute a : attributes) {
            s.append(' ').append(a.type()).append('=');
            if (a.nested()) {
                s.append('{').append(attributes(a.children()).strip()).append('}');
            } else {
                s.append("0x").append(HexFormat.of().formatHex(a.value().toArray()));
            }
        }
        return s.toString();
    }
}
