package dev.gatun.cli;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.driver.ConflictException;
import dev.gatun.netlink.DumpInterruptedException;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netlink.ReplyOverrunException;
import dev.gatun.netlink.ReplyTimeoutException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Failures a caller may retry keep the exit code of every failure in the kernel: the contract does not move. */
class ExitCodeTest {

    @Test
    void retryableFailuresExitOneLikeAnyFailureInTheKernel() {
        GenerationConflictException conflict = new GenerationConflictException("add element", libc_h.ERESTART, 7);
        assertThat(ExitCode.of(conflict)).isEqualTo(ExitCode.FAILED);
        assertThat(ExitCode.of(GenerationConflictException.gaveUp("publish", 200, conflict))).isEqualTo(ExitCode.FAILED);
        assertThat(ExitCode.of(new ReplyTimeoutException("commit", Duration.ofSeconds(30)))).isEqualTo(ExitCode.FAILED);
        assertThat(ExitCode.of(new ReplyOverrunException("commit"))).isEqualTo(ExitCode.FAILED);
        assertThat(ExitCode.of(new DumpInterruptedException("list", "it kept changing"))).isEqualTo(ExitCode.FAILED);
        assertThat(ExitCode.of(new NetlinkException("add rule", libc_h.ENOENT, null))).isEqualTo(ExitCode.FAILED);
        // A host port held by another owner is a conflict of another kind: still 3.
        assertThat(ExitCode.of(new ConflictException("host port 8080 is held"))).isEqualTo(ExitCode.CONFLICT);
    }
}
