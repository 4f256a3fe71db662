package dev.gatun.bench;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A netlink datagram as one line of text per message, everything in it but what two senders
 * of the same request may differ in: the sequence number and port id of each header, and the
 * generation id a batch's BEGIN carries (the ruleset's, at the time it was read).
 */
final class NetlinkText {

    static final int NFNL_SUBSYS_NFTABLES = 10;
    static final int NFT_MSG_NEWSETELEM = 12;
    private static final int NFNL_MSG_BATCH_BEGIN = 16;
    private static final int NFNL_BATCH_GENID = 1;
    private static final int HEADER = 16;
    private static final int NFGENMSG = 4;

    private NetlinkText() {}

    static List<String> messages(byte[] datagram) {
        ByteBuffer b = ByteBuffer.wrap(datagram).order(ByteOrder.nativeOrder());
        boolean nftables = touchesNftables(datagram);
        List<String> out = new ArrayList<>();
        for (int at = 0; at + HEADER <= datagram.length; ) {
            int len = b.getInt(at);
            int type = Short.toUnsignedInt(b.getShort(at + 4));
            int flags = Short.toUnsignedInt(b.getShort(at + 6));
            if (len < HEADER || at + len > datagram.length) {
                throw new IllegalArgumentException("not a netlink datagram: message of length " + len + " at " + at);
            }
            byte[] payload = new byte[len - HEADER];
            System.arraycopy(datagram, at + HEADER, payload, 0, payload.length);
            if (nftables && type == NFNL_MSG_BATCH_BEGIN) {
                blankGenerationId(payload);
            }
            out.add(String.format("len %d type 0x%04x flags 0x%04x: %s", len, type, flags, HexFormat.of().formatHex(payload)));
            at += (len + 3) & ~3;
        }
        return out;
    }

    /** Whether any message of the datagram is for nf_tables (rtnetlink's types are below 256). */
    static boolean touchesNftables(byte[] datagram) {
        return types(datagram).stream().anyMatch(t -> t >> 8 == NFNL_SUBSYS_NFTABLES);
    }

    /** Whether the datagram adds set elements: the batch that commits a publish. */
    static boolean addsElements(byte[] datagram) {
        return types(datagram).contains(NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWSETELEM);
    }

    private static List<Integer> types(byte[] datagram) {
        ByteBuffer b = ByteBuffer.wrap(datagram).order(ByteOrder.nativeOrder());
        List<Integer> types = new ArrayList<>();
        for (int at = 0; at + HEADER <= datagram.length; ) {
            int len = b.getInt(at);
            types.add(Short.toUnsignedInt(b.getShort(at + 4)));
            if (len < HEADER) {
                break;
            }
            at += (len + 3) & ~3;
        }
        return types;
    }

    /** BEGIN's payload: nfgenmsg, then attributes; NFNL_BATCH_GENID's value becomes zeros. */
    private static void blankGenerationId(byte[] payload) {
        ByteBuffer b = ByteBuffer.wrap(payload).order(ByteOrder.nativeOrder());
        for (int at = NFGENMSG; at + 4 <= payload.length; ) {
            int len = Short.toUnsignedInt(b.getShort(at));
            int type = b.getShort(at + 2) & 0x3fff;
            if (len < 4) {
                break;
            }
            if (type == NFNL_BATCH_GENID) {
                for (int i = at + 4; i < at + len && i < payload.length; i++) {
                    payload[i] = 0;
                }
            }
            at += (len + 3) & ~3;
        }
    }
}
