package dev.gatun.netlink;

/**
 * What the kernel adds to an error when the socket asked for extended ACKs: its own text, the
 * byte offset of the attribute it rejected in the request (NLMSGERR_ATTR_OFFS), and the type of
 * an attribute it missed (NLMSGERR_ATTR_MISS_TYPE). Each is absent (null, -1) when not sent.
 */
public record ExtendedAck(String message, int offset, int missingType) {

    public static final ExtendedAck NONE = new ExtendedAck(null, -1, -1);

    public boolean hasOffset() {
        return offset >= 0;
    }
}
