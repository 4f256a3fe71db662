package dev.gatun.nft.value;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.internal.Constants;
import dev.gatun.netlink.MalformedReplyException;

import java.util.Objects;

/** What a rule or a verdict-map element decides: accept, drop, return, continue, jump or goto a chain. */
public record Verdict(Code code, String chain) {

    public enum Code {
        ACCEPT("accept", kernel_h.NF_ACCEPT),
        DROP("drop", kernel_h.NF_DROP),
        RETURN("return", kernel_h.NFT_RETURN),
        CONTINUE("continue", kernel_h.NFT_CONTINUE),
        JUMP("jump", kernel_h.NFT_JUMP),
        GOTO("goto", kernel_h.NFT_GOTO);

        final String keyword;
        final int value;

        Code(String keyword, int value) {
            this.keyword = keyword;
            this.value = value;
        }

        public String keyword() {
            return keyword;
        }

        public int value() {
            return value;
        }

        public static Code of(int value) {
            return Constants.first(values(), c -> c.value == value)
                    .orElseThrow(() -> new MalformedReplyException("verdict code " + value + " is no verdict gatun knows"));
        }
    }

    public static final Verdict ACCEPT = new Verdict(Code.ACCEPT, null);
    public static final Verdict DROP = new Verdict(Code.DROP, null);
    public static final Verdict RETURN = new Verdict(Code.RETURN, null);
    public static final Verdict CONTINUE = new Verdict(Code.CONTINUE, null);

    public Verdict {
        Objects.requireNonNull(code, "code");
        boolean needsChain = code == Code.JUMP || code == Code.GOTO;
        if (needsChain) {
            NftNames.check("chain", chain);
        } else if (chain != null) {
            throw new IllegalArgumentException(code.keyword + " takes no chain");
        }
    }

    public static Verdict jump(String chain) {
        return new Verdict(Code.JUMP, chain);
    }

    public static Verdict goTo(String chain) {
        return new Verdict(Code.GOTO, chain);
    }

    /** nft's words: "accept", "jump other". */
    public String render() {
        return chain == null ? code.keyword : code.keyword + " " + chain;
    }
}
