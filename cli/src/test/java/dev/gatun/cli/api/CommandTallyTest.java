package dev.gatun.cli.api;

import org.junit.jupiter.api.Test;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/** The count a serve logs when it stops: every command, from many threads at once, and those that exited other than 0. */
class CommandTallyTest {

    @Test
    void countsEveryCommandAndThoseThatExitedOtherThanZero() throws Exception {
        CommandTally tally = new CommandTally();
        assertThat(tally.sentence()).isEqualTo("ran 0 commands for clients, 0 of them exited other than 0");
        tally.count(3);
        assertThat(tally.sentence()).isEqualTo("ran 1 command for clients, 1 of them exited other than 0");
        try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
            for (int t = 0; t < 8; t++) {
                int thread = t;
                pool.submit(() -> {
                    for (int i = 0; i < 1000; i++) {
                        tally.count(thread == 0 && i < 10 ? 1 : 0);
                    }
                });
            }
        }
        assertThat(tally.ran()).isEqualTo(8001);
        assertThat(tally.exitedOtherThanZero()).isEqualTo(11);
        assertThat(tally.sentence()).isEqualTo("ran 8001 commands for clients, 11 of them exited other than 0");
    }

    /** A stop whose drain ran out of time says the commands still running apart, uncounted; they are counted once they end. */
    @Test
    void commandsStillRunningAreSaidApartAndCountedWhenTheyEnd() throws Exception {
        CommandTally tally = new CommandTally();
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try (ExecutorService pool = Executors.newSingleThreadExecutor()) {
            var running = pool.submit(() -> tally.running(() -> {
                started.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                tally.count(0);
                return 0;
            }));
            started.await();
            tally.running(() -> {
                tally.count(1);
                return 1;
            });
            assertThat(tally.stillRunning()).isEqualTo(1);
            assertThat(tally.sentence())
                    .isEqualTo("ran 1 command for clients, 1 of them exited other than 0; 1 still running, not counted");
            release.countDown();
            running.get();
        }
        assertThat(tally.stillRunning()).isZero();
        assertThat(tally.sentence()).isEqualTo("ran 2 commands for clients, 1 of them exited other than 0");
    }

    /** A command that throws (a body that is no command) is not left running. */
    @Test
    void aCommandThatThrowsIsNotLeftRunning() {
        CommandTally tally = new CommandTally();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tally.running(() -> {
            throw new IllegalArgumentException("no command");
        })).isInstanceOf(IllegalArgumentException.class);
        assertThat(tally.stillRunning()).isZero();
        assertThat(tally.ran()).isZero();
    }
}
