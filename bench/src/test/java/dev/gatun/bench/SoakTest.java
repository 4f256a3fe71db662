package dev.gatun.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The soak's pure parts: the 10% verdict and what it reads from /proc and from nft. No root. */
class SoakTest {

    private static final String STATUS = """
            Name:\tjava
            Umask:\t0022
            State:\tS (sleeping)
            Tgid:\t4242
            VmPeak:\t 3716592 kB
            VmHWM:\t   98120 kB
            VmRSS:\t   93012 kB
            RssAnon:\t   61000 kB
            Threads:\t27
            SigQ:\t0/63546
            """;

    @Test
    void readsNumberFieldsOfProcStatus() {
        assertThat(Soak.statusField(STATUS, "VmRSS")).isEqualTo(93012);
        assertThat(Soak.statusField(STATUS, "VmHWM")).isEqualTo(98120);
        assertThat(Soak.statusField(STATUS, "Threads")).isEqualTo(27);
        // A field name that another starts with is not taken for it.
        assertThat(Soak.statusField("VmRSSx:\t1 kB\nVmRSS:\t2 kB\n", "VmRSS")).isEqualTo(2);
        assertThatThrownBy(() -> Soak.statusField(STATUS, "VmSwap")).hasMessageContaining("VmSwap");
    }

    @Test
    void withinTenPercentOfTheBaselineEitherWay() {
        assertThat(Soak.within(100, 110)).isTrue();
        assertThat(Soak.within(100, 90)).isTrue();
        assertThat(Soak.within(100, 111)).isFalse();
        assertThat(Soak.within(100, 89)).isFalse();
        assertThat(Soak.within(93012, 102313)).isTrue();
        assertThat(Soak.within(93012, 102314)).isFalse();
        // Nothing at the baseline: only nothing at the end.
        assertThat(Soak.within(0, 0)).isTrue();
        assertThat(Soak.within(0, 1)).isFalse();
    }

    @Test
    void verdictsNameEachFigureThatDidNotReturn() {
        Soak.Sample baseline = new Soak.Sample("baseline", 2000, 10, 100_000, 40, 30, 5, 2);
        Soak.Sample end = new Soak.Sample("end, idle", 200_000, 900, 125_000, 41, 30, 6, 2);
        List<Soak.Verdict> v = Soak.verdicts(baseline, end);
        assertThat(v).extracting(Soak.Verdict::what).containsExactly("rss_kb", "fds", "threads", "elements", "links");
        assertThat(v).filteredOn(x -> !x.within()).extracting(Soak.Verdict::what).containsExactly("rss_kb", "elements");
    }

    @Test
    void countsTheElementsOfEverySetAndMapInNftsJson() {
        String json = """
                {"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}},
                 {"table": {"family": "inet", "name": "gatun", "handle": 1}},
                 {"map": {"family": "inet", "name": "ports4", "table": "gatun", "type": ["inet_proto", "inet_service"],
                   "map": "ipv4_addr . inet_service", "elem": [
                     [{"elem": {"val": {"concat": ["tcp", 20000]}, "comment": "a-1"}}, {"concat": ["10.88.0.2", 80]}],
                     [{"elem": {"val": {"concat": ["tcp", 20001]}, "comment": "a-1"}}, {"concat": ["10.88.0.2", 81]}]]}},
                 {"map": {"family": "inet", "name": "hostip4", "table": "gatun"}},
                 {"set": {"family": "inet", "name": "bridges", "table": "gatun", "type": "ifname", "elem": ["gatun-n1"]}},
                 {"chain": {"family": "inet", "table": "gatun", "name": "prerouting"}}]}
                """;
        assertThat(Soak.elementCount(json)).isEqualTo(3);
        assertThatThrownBy(() -> Soak.elementCount("Error: No such file")).hasMessageContaining("no JSON");
    }
}
