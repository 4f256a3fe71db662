package dev.gatun.cli.serve;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which namespaces are gatun's throwaway ones, by name: only those a later process may remove. */
class ThrowawayNamespacesTest {

    @Test
    void aThrowawayNamespaceNamesItsProcess() {
        assertThat(ThrowawayNamespaces.ownerOf("gatun-warm-up-4242")).isEqualTo(4242L);
        assertThat(ThrowawayNamespaces.ownerOf("gatun-training-serve-7")).isEqualTo(7L);
        assertThat(ThrowawayNamespaces.ownerOf("gatun-training-host-12")).isEqualTo(12L);
        assertThat(ThrowawayNamespaces.ownerOf("gatun-training-c-99")).isEqualTo(99L);
        assertThat(ThrowawayNamespaces.ownerOf("gatun-warm-up-pod1-5")).as("a warm-up container's").isEqualTo(5L);
        assertThat(ThrowawayNamespaces.ownerOf("gatun-warm-up-pod2-6")).isEqualTo(6L);
        assertThat(ThrowawayNamespaces.ownerOf(ThrowawayNamespaces.of("warm-up")))
                .isEqualTo(ProcessHandle.current().pid());
    }

    @Test
    void anyOtherNameIsNotOne() {
        assertThat(ThrowawayNamespaces.ownerOf("gatun-warm-up-")).isNull();
        assertThat(ThrowawayNamespaces.ownerOf("gatun-warm-up-12a")).isNull();
        assertThat(ThrowawayNamespaces.ownerOf("gatun-warm-up--3")).isNull();
        assertThat(ThrowawayNamespaces.ownerOf("gatun-warm-up-99999999999999999999")).isNull();
        assertThat(ThrowawayNamespaces.ownerOf("gatun-test-123")).isNull();
        assertThat(ThrowawayNamespaces.ownerOf("warm-up-123")).isNull();
        assertThat(ThrowawayNamespaces.ownerOf("ci-runner")).isNull();
        assertThatThrownBy(() -> ThrowawayNamespaces.of("test")).hasMessageContaining("test");
    }
}
