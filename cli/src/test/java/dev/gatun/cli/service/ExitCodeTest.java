package dev.gatun.cli.service;

import dev.gatun.driver.ConflictException;
import dev.gatun.netlink.DumpInterruptedException;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netlink.ReplyOverrunException;
import dev.gatun.netlink.ReplyTimeoutException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

/** Failures a caller may retry keep the exit code of every failure in the kernel: the contract does not move. */
class ExitCodeTest {

    // Linux errno values (asm-generic/errno-base.h, errno.h): the CLI sees core's API only, not its bindings.
    private static final int ENOENT = 2;
    private static final int ERESTART = 85;

    static Stream<Arguments> failures() {
        GenerationConflictException conflict = new GenerationConflictException("add element", ERESTART, 7);
        return Stream.of(
                argumentSet("a generation conflict", conflict, 1),
                argumentSet("giving up after 200 conflicts", GenerationConflictException.gaveUp("publish", 200, conflict), 1),
                argumentSet("no reply in time", new ReplyTimeoutException("commit", Duration.ofSeconds(30)), 1),
                argumentSet("replies lost to a full buffer", new ReplyOverrunException("commit"), 1),
                argumentSet("a dump that kept changing", new DumpInterruptedException("list", "it kept changing"), 1),
                argumentSet("a kernel error", new NetlinkException("add rule", ENOENT, null), 1),
                // A host port held by another owner is a conflict of another kind: still 3.
                argumentSet("a host port held by another owner", new ConflictException("host port 8080 is held"), 3));
    }

    @ParameterizedTest
    @MethodSource("failures")
    void eachFailureExitsWithItsDocumentedCode(RuntimeException failure, int documentedCode) {
        assertThat(ExitCode.of(failure)).isEqualTo(documentedCode);
    }
}
