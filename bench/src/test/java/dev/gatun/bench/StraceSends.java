package dev.gatun.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bytes a process sent on its netlink sockets, in order, read from what
 * {@code strace -f -yy --write=all -e trace=sendto,sendmsg -o FILE} wrote: each call's line
 * (with -yy its descriptor reads {@code 6<NETLINK:[...]>}) and after it the hex dump of the data.
 */
final class StraceSends {

    /** The options that make the output this class reads. */
    static final List<String> OPTIONS = List.of("-f", "-yy", "--seccomp-bpf", "--write=all", "-e", "trace=sendto,sendmsg");

    private static final Pattern CALL = Pattern.compile("^(\\d+) +(?:sendto|sendmsg)\\(\\d+<([^>]*)>");
    private static final Pattern RESUMED = Pattern.compile("^(\\d+) +<\\.\\.\\. (?:sendto|sendmsg) resumed>");
    /** " | 00010  00 00 ... 00  ascii |": the offset, then 16 bytes in a 48-column field. */
    private static final Pattern DUMP = Pattern.compile("^ \\| [0-9a-f]{5}  (.{48})");

    private StraceSends() {}

    static List<byte[]> netlink(Path straceOutput) throws IOException {
        return netlink(Files.readAllLines(straceOutput));
    }

    static List<byte[]> netlink(List<String> lines) {
        List<byte[]> sends = new ArrayList<>();
        // A call another thread interrupted ends on a "resumed" line of its own, without the descriptor.
        Map<String, Boolean> unfinished = new HashMap<>();
        boolean onNetlink = false;
        ByteArrayOutputStream data = null;
        for (String line : lines) {
            Matcher dump = DUMP.matcher(line);
            if (dump.find()) {
                if (data != null) {
                    for (String b : dump.group(1).strip().split(" +")) {
                        data.write(Integer.parseInt(b, 16));
                    }
                }
                continue;
            }
            if (line.startsWith(" * ")) {
                continue; // sendmsg: "* N bytes in buffer I" before each buffer's dump
            }
            add(sends, data, onNetlink);
            data = null;
            Matcher call = CALL.matcher(line);
            Matcher resumed = RESUMED.matcher(line);
            if (call.find()) {
                onNetlink = call.group(2).startsWith("NETLINK");
                if (line.endsWith("<unfinished ...>")) {
                    unfinished.put(call.group(1), onNetlink);
                } else {
                    data = new ByteArrayOutputStream();
                }
            } else if (resumed.find()) {
                onNetlink = unfinished.getOrDefault(resumed.group(1), false);
                data = new ByteArrayOutputStream();
            }
        }
        add(sends, data, onNetlink);
        return sends;
    }

    /** A call that failed has no dump: it sent nothing. */
    private static void add(List<byte[]> sends, ByteArrayOutputStream data, boolean onNetlink) {
        if (data != null && onNetlink && data.size() > 0) {
            sends.add(data.toByteArray());
        }
    }
}
