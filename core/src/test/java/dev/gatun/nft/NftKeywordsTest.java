package dev.gatun.nft;

import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The keyword tables both directions share, without a kernel: words and kernel values map one to one. */
class NftKeywordsTest {

    /** Each table with the words nft has for it (nft(8)). */
    private static final Map<KeywordTable, List<String>> WORDS = Map.of(
            NftKeywords.ADDRESS_TYPES, List.of("unicast", "local", "broadcast", "anycast", "multicast", "blackhole",
                    "unreachable", "prohibit"),
            NftKeywords.CT_STATES, List.of("invalid", "established", "related", "new", "untracked"),
            NftKeywords.CT_STATUSES, List.of("expected", "seen-reply", "assured", "confirmed", "snat", "dnat", "dying"),
            NftKeywords.NETWORK_PROTOCOLS, List.of("ipv4", "ipv6"),
            NftKeywords.CT_DIRECTIONS, List.of("original", "reply"),
            NftKeywords.INTERFACE_TYPES, List.of("ether"),
            NftKeywords.LOG_LEVELS, List.of("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"));

    @Test
    void everyWordReadsBackFromItsValueAndNoTwoShareOne() {
        WORDS.forEach((table, words) -> {
            Set<Integer> values = new HashSet<>();
            for (String word : words) {
                int value = table.value(word);
                assertThat(table.word(value)).as(word).contains(word);
                assertThat(values.add(value)).as("%s has a value of its own", word).isTrue();
            }
        });
    }

    @Test
    void ctStateBitsAreTheKernelsStateBitMacro() {
        // NF_CT_STATE_BIT(ctinfo) is 1 << (ctinfo % IP_CT_IS_REPLY + 1); new is IP_CT_NEW (2), so bit 3.
        assertThat(NftKeywords.CT_STATES.bits("new")).isEqualTo(1 << 3);
        assertThat(NftKeywords.CT_STATES.bits("established", "related")).isEqualTo(0b110);
        assertThat(NftKeywords.CT_STATES.words(0b110 | kernel_h.NF_CT_STATE_INVALID_BIT)).isEqualTo("invalid,established,related");
    }

    @Test
    void statesAndStatusesAreReadInAnyCaseOtherWordsExactly() {
        assertThat(NftKeywords.CT_STATES.bits("ESTABLISHED")).isEqualTo(NftKeywords.CT_STATES.bits("established"));
        assertThat(NftKeywords.CT_STATUSES.bits("DNAT")).isEqualTo(kernel_h.IPS_DST_NAT);
        assertThatThrownBy(() -> NftKeywords.ADDRESS_TYPES.value("LOCAL"))
                .isInstanceOf(InvalidInputException.class).hasMessage("unknown address type 'LOCAL'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"bogus", ""})
    void anUnknownWordIsNamedInTheError(String word) {
        assertThatThrownBy(() -> NftKeywords.CT_STATES.bits(word))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("unknown ct state '" + word + "' (expected invalid, established, related, new or untracked)");
        assertThatThrownBy(() -> NftKeywords.NETWORK_PROTOCOLS.value(word))
                .isInstanceOf(InvalidInputException.class).hasMessage("meta nfproto is ipv4 or ipv6, not '" + word + "'");
    }

    @Test
    void aValueWithoutAWordHasNone() {
        assertThat(NftKeywords.ADDRESS_TYPES.word(kernel_h.RTN_UNSPEC)).isEmpty();
        assertThat(NftKeywords.LOG_LEVELS.word(8)).isEmpty();
    }
}
