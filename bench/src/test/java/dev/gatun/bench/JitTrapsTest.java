package dev.gatun.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Lines copied from the logs of JDK 25 serves run with -Xlog:gc,deoptimization=debug,jit+compilation=debug:file=...:uptime. */
class JitTrapsTest {

    private static final List<String> LOG = List.of(
            "[0.641s] cid=2280     level=4 java.util.concurrent.ConcurrentHashMap.putVal(Ljava/lang/Object;Ljava/lang/Object;Z)"
                    + "Ljava/lang/Object; trap_bci=231 unstable_if reinterpret pc=0x00007fea8bf58170 relative_pc=0x0000000000000c70",
            "[0.651s] cid= 878     level=4 java.lang.String.charAt(I)C trap_bci=21 unloaded reinterpret"
                    + " pc=0x00007fea8bf02ca8 relative_pc=0x00000000000000a8",
            "[8.339s] GC(284) Pause Full (System.gc()) 28M->6M(11M) 24.667ms",
            "[8.450s] cid=5357     level=4 dev.gatun.sockdiag.HostSockets.receiving(ILjava/util/List;)Ljava/util/List;"
                    + " trap_bci=14 class_check maybe_recompile pc=0x00007ff75807d960 relative_pc=0x0000000000001060",
            "[8.452s] cid=5357     level=4 dev.gatun.sockdiag.HostSockets.receiving(ILjava/util/List;)Ljava/util/List;"
                    + " trap_bci=14 class_check maybe_recompile pc=0x00007ff75807d960 relative_pc=0x0000000000001060",
            "[8.460s]  270       2       jdk.internal.misc.Unsafe::getShortUnaligned (12 bytes)   made not entrant: not used",
            "[8.965s] cid=5194     level=4 dev.gatun.netlink.NftBatch.add(Ljava/util/function/Supplier;IIILdev/gatun/netlink/"
                    + "NftBatch$PayloadWriter;)V trap_bci=49 class_check maybe_recompile pc=0x00007f93b811384c"
                    + " relative_pc=0x00000000000059cc",
            // Not copied: no OSR trap was logged here; written in HotSpot's log_deopt format for one.
            "[9.100s] cid= 812 osr level=4 dev.gatun.cli.ServeWarmUp.warmUp(Ljava/util/List;)V trap_bci=40 osr_bci=12"
                    + " unstable_if reinterpret pc=0x00007f93b8113000 relative_pc=0x0000000000000100",
            "[9.930s] GC(400) Pause Full (System.gc()) 9M->5M(10M) 23.232ms");

    @Test
    void namesEachPlaceTrappedAfterTheWarmUpsCollectionOnce() {
        // Not the traps before the first System.gc() (the warm-up's own), nor a tier replaced ("not used").
        assertThat(JitTraps.afterWarmUp(LOG)).containsExactly(
                "dev.gatun.sockdiag.HostSockets.receiving@14 class_check maybe_recompile",
                "dev.gatun.netlink.NftBatch.add@49 class_check maybe_recompile",
                "dev.gatun.cli.ServeWarmUp.warmUp@40 unstable_if reinterpret");
    }

    @Test
    void withoutTheWarmUpsCollectionItSaysItDoesNotKnow() {
        assertThat(JitTraps.afterWarmUp(List.of(LOG.getFirst(), LOG.get(3)))).isNull();
        assertThat(JitTraps.afterWarmUp(List.of(LOG.get(2)))).isEmpty();
    }
}
