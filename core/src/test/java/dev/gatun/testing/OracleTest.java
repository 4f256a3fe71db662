package dev.gatun.testing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The oracle's own plumbing, with plain shell commands: no namespace, no root. */
class OracleTest {

    /** 1 MB on each stream, stderr first: far more than a pipe holds, so reading one after the other would stall. */
    @Test
    void aToolThatFillsBothPipesIsReadWhole() {
        Oracle.Result r = Oracle.run(List.of("sh", "-c",
                "head -c 1000000 /dev/zero | tr '\\0' e >&2; head -c 1000000 /dev/zero | tr '\\0' o; exit 3"));
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.stderr()).hasSize(1_000_000).containsOnlyOnce("e".repeat(1_000_000));
        assertThat(r.stdout()).hasSize(1_000_000).containsOnlyOnce("o".repeat(1_000_000));
    }

    @Test
    void aToolThatHangsFailsNamingItAndWhatItSaid() {
        assertThatThrownBy(() -> Oracle.run(List.of("sh", "-c", "echo started >&2; exec sleep 600"), Duration.ofMillis(500)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("sleep 600").hasMessageContaining("did not finish within").hasMessageContaining("killed it");
    }
}
