package dev.gatun.driver.foreign;

import dev.gatun.InvalidInputException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What gatun writes into another tool's iptables, decided from iptables-save's text alone; no
 * root needed. The texts are what the real iptables-save, ip6tables-save and their -nft and
 * -legacy variants printed for ufw's and dockerd's layouts in a throwaway namespace: resources
 * xtables-captures/, made by its capture.sh from captures.list and the *.rules next to it.
 */
class XtablesForwardTest {

    private static XtablesForward.Filter captured(String name) {
        try (InputStream in = XtablesForwardTest.class.getResourceAsStream("/xtables-captures/" + name + ".save")) {
            assertThat(in).as("capture " + name + " (run xtables-captures/capture.sh)").isNotNull();
            return XtablesForward.Filter.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ufw.iptables-legacy", "ufw.iptables-nft", "ufw.ip6tables-legacy", "ufw.ip6tables-nft"})
    void aDroppingForwardGetsGatunsChainAndOneJumpAtTheTop(String capture) {
        XtablesForward.Filter f = captured(capture);
        assertThat(f.drops()).hasValue("policy DROP");
        assertThat(f.parent()).isEqualTo("FORWARD");
        assertThat(XtablesForward.script(f, List.of("gt-b", "gt-a"))).containsExactly(
                ":GATUN-ALLOW - [0:0]",
                "-A GATUN-ALLOW -i gt-a -j ACCEPT", "-A GATUN-ALLOW -o gt-a -j ACCEPT",
                "-A GATUN-ALLOW -i gt-b -j ACCEPT", "-A GATUN-ALLOW -o gt-b -j ACCEPT",
                "-I FORWARD 1 -j GATUN-ALLOW");
    }

    @ParameterizedTest
    @ValueSource(strings = {"docker-24-27.iptables-legacy", "docker-24-27.iptables-nft", "docker-28.iptables-legacy",
            "docker-28.iptables-nft"})
    void dockersChainsGetTheJumpAtTheTopOfDockerUser(String capture) {
        XtablesForward.Filter f = captured(capture);
        assertThat(f.drops()).hasValue("policy DROP, Docker's chains");
        assertThat(f.parent()).isEqualTo("DOCKER-USER");
        assertThat(XtablesForward.script(f, List.of("gt-a"))).containsExactly(":GATUN-ALLOW - [0:0]",
                "-A GATUN-ALLOW -i gt-a -j ACCEPT", "-A GATUN-ALLOW -o gt-a -j ACCEPT", "-I DOCKER-USER 1 -j GATUN-ALLOW");
    }

    @ParameterizedTest
    @ValueSource(strings = {"docker-24-27-with-gatun.iptables-legacy", "docker-24-27-with-gatun.iptables-nft",
            "docker-28-with-gatun.iptables-nft"})
    void whatIsInPlaceIsLeftAlone(String capture) {
        XtablesForward.Filter f = captured(capture);
        assertThat(f.drops()).hasValue("policy DROP, Docker's chains");
        assertThat(f.jumpInPlace()).isTrue();
        assertThat(XtablesForward.script(f, List.of("gt-a"))).isEmpty();
    }

    @Test
    void anotherBridgeRewritesOnlyGatunsChain() {
        assertThat(XtablesForward.script(captured("docker-24-27-with-gatun.iptables-nft"), List.of("gt-a", "gt-c")))
                .containsExactly(":GATUN-ALLOW - [0:0]",
                        "-A GATUN-ALLOW -i gt-a -j ACCEPT", "-A GATUN-ALLOW -o gt-a -j ACCEPT",
                        "-A GATUN-ALLOW -i gt-c -j ACCEPT", "-A GATUN-ALLOW -o gt-c -j ACCEPT");
    }

    @Test
    void aJumpInFORWARDMovesToDockerUserOnceDockerIsThere() {
        XtablesForward.Filter f = captured("gatun-then-docker-24-27.iptables-nft");
        assertThat(f.jumpInPlace()).isFalse();
        assertThat(XtablesForward.script(f, List.of("gt-a")))
                .containsExactly("-D FORWARD -j GATUN-ALLOW", "-I DOCKER-USER 1 -j GATUN-ALLOW");
    }

    @Test
    void theLastBridgeGoneRemovesTheJumpAndTheChain() {
        assertThat(XtablesForward.script(captured("docker-24-27-with-gatun.iptables-legacy"), List.of()))
                .containsExactly("-D DOCKER-USER -j GATUN-ALLOW", "-F GATUN-ALLOW", "-X GATUN-ALLOW");
    }

    @Test
    void anAcceptingFilterTableOrNoneAtAllIsNotTouched() {
        XtablesForward.Filter accepting = captured("accepting.iptables-legacy");
        assertThat(accepting.exists()).isTrue();
        assertThat(accepting.drops()).isEmpty();
        assertThat(XtablesForward.script(accepting, List.of("gt-a"))).isEmpty();
        XtablesForward.Filter none = captured("empty.iptables-legacy");
        assertThat(none.exists()).as("legacy iptables-save in a namespace without tables").isFalse();
        assertThat(XtablesForward.script(none, List.of("gt-a"))).isEmpty();
        assertThat(captured("reject-rule.iptables-nft").drops()).hasValue("a rule that drops");
    }

    @Test
    void theAcceptMarkIsANonZero32BitMask() {
        assertThat(AcceptMark.parse("0x2000")).isEqualTo(0x2000);
        assertThat(AcceptMark.parse("16")).isEqualTo(16);
        assertThat(AcceptMark.parse("0xffffffff")).isEqualTo(-1);
        assertThatThrownBy(() -> AcceptMark.parse("0")).isInstanceOf(InvalidInputException.class).hasMessageContaining("'0'");
        assertThatThrownBy(() -> AcceptMark.parse("0x100000000")).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> AcceptMark.parse("lots")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'lots' is not a number");
        assertThat(AcceptMark.acceptRule("inet", "fw", "forward", 0x2000))
                .isEqualTo("nft insert rule inet fw forward meta mark & 0x00002000 == 0x00002000 accept");
    }
}
