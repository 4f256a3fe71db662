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
}
