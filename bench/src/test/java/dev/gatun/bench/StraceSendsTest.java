package dev.gatun.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class StraceSendsTest {

    @Test
    void readsTheNetlinkSendsInOrderAlsoWhenAnotherThreadInterrupts() {
        List<String> lines = List.of(
                "10 sendto(6<NETLINK:[1296424]>, [{nlmsg_len=20, ...}], 20, 0, {...}, 12) = 20",
                " | 00000  14 00 00 00 10 0a 05 00  b8 49 0e 6b 00 00 00 00  .........I.k.... |",
                " | 00010  00 00 00 00                                       ....             |",
                "11 sendto(9<UDP:[1.2.3.4:5->6.7.8.9:10]>, \"ab\", 2, 0, NULL, 0) = 2",
                " | 00000  61 62                                             ab               |",
                "10 sendto(6<NETLINK:[1296424]>, [{nlmsg_len=20, ...}], 20, 0, {...}, 12 <unfinished ...>",
                "12 +++ exited with 0 +++",
                "10 <... sendto resumed>) = 20",
                " | 00000  01 02 03                                          ...              |",
                "10 +++ exited with 0 +++");
        List<byte[]> sends = StraceSends.netlink(lines);
        assertThat(sends).hasSize(2);
        assertThat(sends.get(0)).hasSize(20).startsWith(0x14, 0, 0, 0, 0x10, 0x0a, 5, 0);
        assertThat(sends.get(1)).containsExactly(1, 2, 3);
    }
}
