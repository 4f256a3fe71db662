package dev.gatun.cli.serve;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The count a serve logs when it stops: every command, from many threads at once, and those that exited other than 0. */
class CommandTallyTest {

    private static int exitingWith(CommandTally tally, int code) {
        return tally.running(() -> code, c -> c);
    }

    @Test
    void countsEveryCommandAndThoseThatExitedOtherThanZero() throws Exception {
        CommandTally tally = new CommandTally();
        assertThat(tally.sentence()).isEqualTo("ran 0 commands for clients, 0 of them exited other than 0");
        exitingWith(tally, 3);
        assertThat(tally.sentence()).isEqualTo("ran 1 command for clients, 1 of them exited other than 0");
        try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
            for (int t = 0; t < 8; t++) {
                int thread = t;
                pool.submit(() -> {
                    for (int i = 0; i < 1000; i++) {
                        exitingWith(tally, thread == 0 && i < 10 ? 1 : 0);
                    }
                });
            }
        }
        assertThat(tally.ran()).isEqualTo(8001);
        assertThat(tally.exitedOtherThanZero()).isEqualTo(11);
        assertThat(tally.stillRunning()).isZero();
        assertThat(tally.sentence()).isEqualTo("ran 8001 commands for clients, 11 of them exited other than 0");
    }

    /** A stop whose drain ran out of time says the commands still running apart, uncounted; they are counted once they end. */
    @Test
    void commandsStillRunningAreSaidApartAndCountedWhenTheyEnd() throws Exception {
        CommandTally tally = new CommandTally();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newSingleThreadExecutor()) {
            Future<Integer> running = pool.submit(() -> tally.running(() -> {
                started.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 0;
            }, c -> c));
            started.await();
            exitingWith(tally, 1);
            assertThat(tally.stillRunning()).isEqualTo(1);
            assertThat(tally.sentence())
                    .isEqualTo("ran 1 command for clients, 1 of them exited other than 0; 1 still running, not counted");
            release.countDown();
            running.get();
        }
        assertThat(tally.stillRunning()).isZero();
        assertThat(tally.sentence()).isEqualTo("ran 2 commands for clients, 1 of them exited other than 0");
    }

    /** A command that throws ran and failed: counted as one that exited other than 0, and not left running. */
    @Test
    void aCommandThatThrowsIsCountedAsFailed() {
        CommandTally tally = new CommandTally();
        assertThatThrownBy(() -> tally.running(() -> {
            throw new IllegalStateException("the driver broke");
        }, c -> 0)).isInstanceOf(IllegalStateException.class);
        assertThat(tally.stillRunning()).isZero();
        assertThat(tally.sentence()).isEqualTo("ran 1 command for clients, 1 of them exited other than 0");
    }
}
