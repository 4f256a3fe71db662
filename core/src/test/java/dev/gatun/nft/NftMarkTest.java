package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.InvalidInputException;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.MetaSet;
import dev.gatun.nft.expr.Registers;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The mark bit gatun sets on what it forwards, and the match another table uses to accept it; no kernel needed. */
class NftMarkTest {

    private static final Chain FORWARD = Chain.base(Table.of(Family.IP, "gatun"), "forward", ChainType.FILTER,
            Hook.FORWARD, Priority.FILTER, Verdict.Code.DROP);

    @Test
    void settingBitsIsLoadMaskAndSet() {
        Rule rule = Rule.in(FORWARD).setMarkBits(0x00002000).build();

        assertThat(rule.expressions()).containsExactly(new Meta(Meta.Key.MARK, Registers.REG1),
                new Bitwise(Registers.REG1, Registers.REG1, HostOrder.int32(0xffffdfff), HostOrder.int32(0x2000), true),
                new MetaSet(Meta.Key.MARK, Registers.REG1));
    }

    @Test
    void rendersAsNftListsIt() {
        assertThat(NftRenderer.render(Rule.in(FORWARD).match(Field.META_OIFNAME, "br0").setMarkBits(0x00002000).accept()
                .build())).isEqualTo("oifname \"br0\" meta mark set meta mark | 0x00002000 accept");
        assertThat(NftRenderer.render(Rule.in(FORWARD).matchMarkBits(0x00002000).accept().build()))
                .isEqualTo("meta mark & 0x00002000 == 0x00002000 accept");
    }

    @Test
    void isReadBackAsBuilt() {
        Rule rule = Rule.in(FORWARD).setMarkBits(0x00006000).matchMarkBits(0x00004000).accept().build();

        assertThat(RuleMessages.readBack(rule).expressions()).isEqualTo(rule.expressions());
    }

    @Test
    void noBitsIsRefused() {
        assertThatThrownBy(() -> Rule.in(FORWARD).setMarkBits(0)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Rule.in(FORWARD).matchMarkBits(0)).isInstanceOf(InvalidInputException.class);
    }
}
