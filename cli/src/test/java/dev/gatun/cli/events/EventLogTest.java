package dev.gatun.cli.events;

import dev.gatun.cli.api.EventStream;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class EventLogTest {

    private static PortMapping mapping(int port) throws Exception {
        return new PortMapping("n1", Protocol.TCP, null, port, InetAddress.getByName("10.88.0.2"), 80, "c1");
    }

    @Test
    void eachMappingIsAnEventInOrderWithTheCauseOfTheThreadThatCommittedIt() throws Exception {
        EventLog log = new EventLog();
        List<PortMapping> two = List.of(mapping(8080), mapping(8081));
        EventCause.as("gatun publish n1 (local API)", () -> log.published(two));
        log.unpublished(List.of(mapping(8080)));
        log.changedOutside("deleted the table inet gatun", "pid 7 (nft)");
        log.repaired(List.of("port *:8081/tcp"), dev.gatun.driver.HealListener.Cause.OWN_TABLE,
                "gatun's table changed by another process", Duration.ofMillis(3));

        EventLog.Batch b = log.after(0, null, Duration.ZERO);
        assertThat(b.events()).extracting(ServeEvent::seq).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(b.events()).extracting(ServeEvent::kind)
                .containsExactly("publish", "publish", "unpublish", "outside-change", "repair");
        assertThat(b.events()).extracting(ServeEvent::cause).containsExactly("gatun publish n1 (local API)",
                "gatun publish n1 (local API)", "gatun serve", "pid 7 (nft)", "gatun's table changed by another process");
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) EventStream.document(b.events().get(1)).get("mapping");
        assertThat(m).containsEntry("hostPort", 8081).containsEntry("owner", "c1");
        assertThat(log.after(3, null, Duration.ZERO).events()).extracting(ServeEvent::seq).containsExactly(4L, 5L);
    }

    @Test
    void sinceLeavesOutWhatCameBeforeAndAReaderThatFellBehindIsToldHowManyItMissed() throws Exception {
        EventLog log = new EventLog();
        log.published(List.of(mapping(1)));
        Thread.sleep(5);
        Instant cut = Instant.now();
        Thread.sleep(5);
        log.published(List.of(mapping(2)));
        assertThat(log.after(0, cut, Duration.ZERO).events()).extracting(ServeEvent::seq).containsExactly(2L);

        for (int i = 0; i < EventLog.KEPT + 5; i++) {
            log.published(List.of(mapping(10 + i % 1000)));
        }
        EventLog.Batch late = log.after(2, null, Duration.ZERO);
        // 10,007 events, 10,000 kept: 1 to 7 dropped, of which this reader had 1 and 2.
        assertThat(late.missed()).isEqualTo(5);
        assertThat(late.events()).hasSize(EventLog.KEPT);
        assertThat(late.events().getFirst().seq()).isEqualTo(8);
    }

    @Test
    void aWaitingReaderWakesAtTheNextEventAndAtClose() throws Exception {
        EventLog log = new EventLog();
        Thread writer = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(50);
                log.published(List.of(mapping(9)));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        EventLog.Batch b = log.after(0, null, Duration.ofSeconds(30));
        writer.join();
        assertThat(b.events()).extracting(ServeEvent::seq).containsExactly(1L);
        Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException ignored) {
                // the test ends
            }
            log.close();
        });
        EventLog.Batch closed = log.after(1, null, Duration.ofSeconds(30));
        assertThat(closed.closed()).isTrue();
        assertThat(closed.events()).isEmpty();
    }
}
