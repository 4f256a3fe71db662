package dev.gatun.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Lines as a JDK 25 serve's -Xlog:gc,deoptimization=debug:file=...:uptime writes them. */
class JitTrapsTest {

    private static final List<String> LOG = List.of(
            "[0.094s]   59       3       java.util.HashMap::putVal (300 bytes)   made not entrant: uncommon trap",
            "[8.201s] GC(336) Pause Full (System.gc()) 29M->6M(11M) 34.231ms",
            "[8.233s] cid=5166     level=4 dev.gatun.driver.bridge.FollowedMappingStore.catchUp()V trap_bci=16 unstable_if reinterpret",
            "[8.233s] 5166   !   4       dev.gatun.driver.bridge.CommitLoop::commit (520 bytes)   made not entrant: uncommon trap",
            "[8.249s] 4873       2       dev.gatun.driver.bridge.CommitLoop$$Lambda/0x800000201::get (16 bytes)   made not entrant: not used",
            "[8.250s] GC(337) Pause Young (Allocation Failure) 4M->2M(7M) 0.9ms",
            "[9.921s] 5304   !   4       dev.gatun.sockdiag.HostSockets::receiving (249 bytes)   made not entrant: uncommon trap",
            "[9.930s] GC(400) Pause Full (System.gc()) 9M->5M(10M) 23.232ms",
            "[9.931s] 5304   !   4       dev.gatun.sockdiag.HostSockets::receiving (249 bytes)   made not entrant: uncommon trap");

    @Test
    void namesTheMethodsTrappedAfterTheWarmUpsCollectionOnly() {
        // Not the trap before the first System.gc() (the warm-up's own), nor "not used" (a tier replaced).
        assertThat(JitTraps.afterWarmUp(LOG)).containsExactly("dev.gatun.driver.bridge.CommitLoop::commit",
                "dev.gatun.sockdiag.HostSockets::receiving", "dev.gatun.sockdiag.HostSockets::receiving");
    }

    @Test
    void withoutTheWarmUpsCollectionItSaysItDoesNotKnow() {
        assertThat(JitTraps.afterWarmUp(List.of(LOG.getFirst(), LOG.get(3)))).isNull();
        assertThat(JitTraps.afterWarmUp(List.of(LOG.get(1)))).isEmpty();
    }
}
