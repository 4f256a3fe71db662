package dev.gatun.nft.value;

import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libnftnl_h;

import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/** Checks names and comments against the kernel's limits before anything is sent. */
public final class NftNames {

    /** Longest name in bytes: the kernel's limit includes the terminating NUL. */
    public static final int MAX_NAME_BYTES = kernel_h.NFT_NAME_MAXLEN - 1;
    /** Longest comment in bytes that nft accepts. */
    public static final int MAX_COMMENT_BYTES = libnftnl_h.NFTNL_UDATA_COMMENT_MAXLEN - 1;

    private NftNames() {}

    /** Refuses an empty name, one over the kernel's limit, or one with a NUL or control character. */
    public static String check(String kind, String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidInputException(kind + " name must not be empty");
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_NAME_BYTES) {
            throw new InvalidInputException(kind + " name '" + abbreviate(name) + "' is " + bytes
                    + " bytes long; the kernel allows at most " + MAX_NAME_BYTES);
        }
        for (int i = 0; i < name.length(); i++) {
            if (Character.isISOControl(name.charAt(i))) {
                throw new InvalidInputException(kind + " name '" + printable(name) + "' contains a control character");
            }
        }
        return name;
    }

    /** Refuses a comment over the user-data limit or with control characters; null means none. */
    public static String checkComment(String owner, String comment) {
        return checkComment(() -> owner, comment);
    }

    /** {@link #checkComment(String, String)}, naming the owner only when the comment is refused. */
    public static String checkComment(Supplier<String> ownerName, String comment) {
        if (comment == null) {
            return null;
        }
        int bytes = comment.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_COMMENT_BYTES) {
            throw new InvalidInputException("comment of " + ownerName.get() + " is " + bytes + " bytes long; at most "
                    + MAX_COMMENT_BYTES + " fit");
        }
        for (int i = 0; i < comment.length(); i++) {
            if (Character.isISOControl(comment.charAt(i)) || comment.charAt(i) == '"') {
                throw new InvalidInputException("comment of " + ownerName.get() + " '" + printable(comment)
                        + "' contains a control character or a double quote");
            }
        }
        return comment;
    }

    static String abbreviate(String s) {
        return s.length() > 40 ? s.substring(0, 37) + "..." : s;
    }

    static String printable(String s) {
        return abbreviate(s.replaceAll("\\p{Cntrl}", "?"));
    }
}
