package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Served;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.StandInDriver;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A serve parses every request of a command with a picocli model it made once and keeps between
 * requests, whichever thread runs them: nothing of one request (an option, a value) may reach
 * the next. No root: the driver is a stand-in that records what it was asked.
 */
class ServedReuseTest {

    private final List<String> owners = new ArrayList<>();

    private GatunDriver recording() {
        return StandInDriver.answering(Map.of("publish", args -> {
            PortRequest r = (PortRequest) args[0];
            InetAddress ip = r.containerIp();
            String owner = r.owner();
            owners.add(String.valueOf(owner));
            PortSpec p = r.ports().getFirst();
            return List.of(new PortMapping(r.network(), p.protocol(), null, p.hostStart(), ip, p.containerStart(),
                    owner == null ? ip.getHostAddress() : owner));
        }));
    }

    private record Ran(int code, String out, String err) {}

    private static Ran run(Served served, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = CommandLines.run(args, new PrintWriter(out, true), new PrintWriter(err, true), served);
        return new Ran(code, out.toString(), err.toString());
    }

    @Test
    void aRequestLeavesNothingToTheNextOnTheSameThread() {
        Served served = new Served(NetworkNamespace.current(), "nftables", recording());

        Ran first = run(served, "--json", "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "web-1", "--timing");
        Ran second = run(served, "publish", "n1", "10.88.0.3", "-p", "9090:90");
        Ran bad = run(served, "publish", "n1", "10.88.0.4");
        Ran third = run(served, "publish", "n1", "10.88.0.5", "-p", "7070:70");

        assertThat(first.code()).as(first.err()).isZero();
        assertThat(first.out()).startsWith("[").contains("\"owner\" : \"web-1\"");
        assertThat(first.err()).contains("published in");
        assertThat(second.code()).as(second.err()).isZero();
        assertThat(second.out()).as("no --json, no --owner, no --timing carried over")
                .isEqualTo("published *:9090 -> 10.88.0.3:90/tcp (owner 10.88.0.3)\n");
        assertThat(second.err()).isEmpty();
        assertThat(bad.code()).as("-p is required again").isEqualTo(ExitCode.USAGE);
        assertThat(third.out()).isEqualTo("published *:7070 -> 10.88.0.5:70/tcp (owner 10.88.0.5)\n");
        assertThat(owners).containsExactly("web-1", "null", "null");
    }

    /** A model given back by one thread is the next thread's: what the first set is gone there too. */
    @Test
    void aRequestLeavesNothingToTheNextOnAnotherThread() throws Exception {
        Served served = new Served(NetworkNamespace.current(), "nftables", recording());
        CommandLines.prepareServedCommands();
        Ran[] ran = new Ran[2];
        Thread first = Thread.ofPlatform().start(() ->
                ran[0] = run(served, "--json", "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "web-1"));
        first.join();
        Thread second = Thread.ofPlatform().start(() -> ran[1] = run(served, "publish", "n1", "10.88.0.3", "-p", "9090:90"));
        second.join();

        assertThat(ran[0].out()).contains("\"owner\" : \"web-1\"");
        assertThat(ran[1].out()).as("no --json, no --owner carried over from the other thread")
                .isEqualTo("published *:9090 -> 10.88.0.3:90/tcp (owner 10.88.0.3)\n");
        assertThat(owners).containsExactly("web-1", "null");
    }

    /** The kept model must not hold a request's output (megabytes for a bulk publish) until the thread's next one. */
    @Test
    void theKeptModelLetsGoOfTheRequestsOutput() throws InterruptedException {
        Served served = new Served(NetworkNamespace.current(), "nftables", recording());
        StringWriter out = new StringWriter();
        WeakReference<StringWriter> written = new WeakReference<>(out);
        int code = CommandLines.run(new String[]{"publish", "n1", "10.88.0.2", "-p", "8080:80"}, new PrintWriter(out, true),
                new PrintWriter(new StringWriter(), true), served);
        assertThat(code).isZero();
        assertThat(out.toString()).startsWith("published ");
        out = null;
        for (int i = 0; i < 20 && written.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertThat(written.get()).as("the request's output, after the request").isNull();
    }

    /**
     * Nor the serve it ran for: the warm-up's requests run for a throwaway namespace's driver,
     * whose listeners hold thousands of events, and a kept model would hold them all until the
     * thread's next command of the same name.
     */
    @Test
    void theKeptModelLetsGoOfTheServeItRanFor() throws InterruptedException {
        Served served = new Served(NetworkNamespace.current(), "nftables", recording());
        WeakReference<Served> ranFor = new WeakReference<>(served);
        int code = CommandLines.run(new String[]{"publish", "n1", "10.88.0.2", "-p", "8080:80"},
                new PrintWriter(new StringWriter(), true), new PrintWriter(new StringWriter(), true), served);
        assertThat(code).isZero();
        served = null;
        for (int i = 0; i < 20 && ranFor.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertThat(ranFor.get()).as("the serve the request ran for, after the request").isNull();
    }
}
