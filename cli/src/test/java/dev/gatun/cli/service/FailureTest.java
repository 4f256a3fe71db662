package dev.gatun.cli.service;

import dev.gatun.EnvironmentException;
import dev.gatun.ErrnoException;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.MissingLibraryException;
import dev.gatun.PrivilegeException;
import dev.gatun.cli.cni.CniError;
import dev.gatun.cli.docker.DockerPlugin;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.NotFoundException;
import dev.gatun.netlink.DumpInterruptedException;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.MalformedReplyException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netlink.ReplyOverrunException;
import dev.gatun.netlink.ReplyTimeoutException;
import dev.gatun.netns.NamespaceExistsException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

/**
 * Every kind of failure, its class, and what each adapter answers for it, as the READMEs
 * document them: the exit code (README.md), the local API's status (cli/README.md), the Docker
 * plugin's status, the CNI code (cli/README.md's table).
 */
class FailureTest {

    // Linux errno values (asm-generic/errno-base.h, errno.h): the CLI sees core's API only, not its bindings.
    private static final int EPERM = 1;
    private static final int ENOENT = 2;
    private static final int ENOMEM = 12;
    private static final int ENFILE = 23;
    private static final int EMFILE = 24;
    private static final int ERESTART = 85;

    static Stream<Arguments> failures() {
        return Stream.of(
                row("bad input", new InvalidInputException("port 70000 is out of range"), Failure.USAGE, 2, 400, 400, 7),
                row("no such network", new NotFoundException("no network n9"), Failure.NOT_FOUND, 2, 404, 400, 7),
                row("held by another owner", new ConflictException("held by web-2"), Failure.CONFLICT, 3, 409, 409, 101),
                row("a namespace that exists", new NamespaceExistsException("host1 exists"), Failure.CONFLICT, 3, 409, 409,
                        101),
                row("no privilege", new PrivilegeException("add table", EPERM, null), Failure.ENVIRONMENT, 4, 503,
                        503, 102),
                row("a missing library", new MissingLibraryException("libnftnl.so.11 is not installed"),
                        Failure.ENVIRONMENT, 4, 503, 503, 102),
                row("a missing tool", new EnvironmentException("iptables is not installed"), Failure.ENVIRONMENT, 4, 503,
                        503, 102),
                row("a generation conflict", new GenerationConflictException("add element", ERESTART, 7),
                        Failure.RETRYABLE, 1, 503, 503, 11),
                row("no reply in time", new ReplyTimeoutException("commit", Duration.ofSeconds(30)), Failure.RETRYABLE, 1,
                        503, 503, 11),
                row("replies lost to a full buffer", new ReplyOverrunException("commit"), Failure.RETRYABLE, 1, 503, 503,
                        11),
                row("a dump that kept changing", new DumpInterruptedException("list", "it kept changing"),
                        Failure.RETRYABLE, 1, 503, 503, 11),
                row("no descriptor left in the process", new ErrnoException("open /proc/thread-self/ns/net", EMFILE),
                        Failure.RETRYABLE, 1, 503, 503, 11),
                row("no descriptor left on the host", new ErrnoException("socket", ENFILE), Failure.RETRYABLE, 1, 503, 503,
                        11),
                row("no memory left for the process", new ErrnoException("mmap", ENOMEM), Failure.RETRYABLE, 1, 503, 503,
                        11),
                row("a set that is full, said by the kernel", new NetlinkException("add element", ENFILE, null),
                        Failure.FAILED, 1, 500, 500, 100),
                row("a call that failed otherwise", new ErrnoException("open /run/netns/x", ENOENT), Failure.FAILED, 1,
                        500, 500, 100),
                row("a kernel error", new NetlinkException("add rule", ENOENT, null), Failure.FAILED, 1, 500, 500,
                        100),
                row("a malformed reply", new MalformedReplyException("a short attribute"), Failure.FAILED, 1, 500, 500, 100),
                row("gatun's own", new GatunException("the kernel refused"), Failure.FAILED, 1, 500, 500, 100),
                row("a bug", new IllegalStateException("unexpected"), Failure.FAILED, 1, 500, 500, 100));
    }

    private static Arguments row(String name, RuntimeException e, Failure failure, int exit, int http, int docker, int cni) {
        return argumentSet(name, e, failure, exit, http, docker, cni);
    }

    @ParameterizedTest
    @MethodSource("failures")
    void eachAdapterMapsTheClassOnce(RuntimeException e, Failure failure, int exitCode, int httpStatus, int dockerStatus,
                                     int cniCode) {
        assertThat(Failure.of(e)).isEqualTo(failure);
        assertThat(ExitCode.of(e)).as("exit code").isEqualTo(exitCode);
        assertThat(ErrorStatus.of(e)).as("local API status").isEqualTo(httpStatus);
        assertThat(ErrorStatus.retryAfterSeconds(e).isPresent()).as("Retry-After").isEqualTo(failure == Failure.RETRYABLE);
        assertThat(DockerPlugin.status(e)).as("Docker plugin status").isEqualTo(dockerStatus);
        assertThat(CniError.of(e).code()).as("CNI code").isEqualTo(cniCode);
    }
}
