package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.nft.value.NftNames;

import java.nio.charset.StandardCharsets;

/** Who made an endpoint or a mapping, as kept in an alias and in an element's comment. */
final class OwnerNames {

    /** An owner is an element's comment in nftables, whose length the kernel limits. */
    private static final int MAX_BYTES = NftNames.MAX_COMMENT_BYTES;

    private OwnerNames() {}

    /** {@code owner} if it is non-empty, short enough and without control characters or double quotes. */
    static String check(String owner) {
        if (owner.isEmpty()) {
            throw new InvalidInputException("owner must not be empty");
        }
        for (int i = 0; i < owner.length(); i++) {
            char c = owner.charAt(i);
            if (Character.isISOControl(c) || c == '"') {
                throw new InvalidInputException("owner '" + owner.replaceAll("\\p{Cntrl}", "?")
                        + "' contains a control character or a double quote");
            }
        }
        if (owner.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new InvalidInputException("owner '" + owner + "' is longer than " + MAX_BYTES + " bytes");
        }
        return owner;
    }
}
