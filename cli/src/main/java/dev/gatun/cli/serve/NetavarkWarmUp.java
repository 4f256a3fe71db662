package dev.gatun.cli.serve;

import dev.gatun.cli.wire.ServeClient;
import dev.gatun.netns.NetworkNamespace;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The containers of a serve's warm-up: Podman 5's calls of gatun's netavark plugin, sent over the
 * throwaway namespace's calls socket as the C client sends them. Without them the code of a
 * container's setup and teardown (a network made at its first container with gatun's table, the
 * endpoint, the publish with the network's entries, and their removal) ran interpreted through a
 * serve's first dozens of containers: the first setup took 270 ms, the next ten 25 to 90, and
 * they came down to some 20 only after 25 of them (bench/runs/2026-12-06-a-serve-s-first-podman-containers.md, "A serve's first Podman
 * containers"). Each round is a network's first container, four more that come and go beside it,
 * and its last container's teardown (the network and, on a namespace with no other network of
 * gatun, gatun's table go with it); every other container has 32 ports.
 */
final class NetavarkWarmUp {

    /** The network's subnet, inside the throwaway namespace only (the publishes' is {@link ServeWarmUp#SUBNET}). */
    static final String SUBNET = "10.213.1.0/24";

    /** Rounds of containers: each code path of a setup and a teardown runs at least this often. */
    static final int ROUNDS = 6;

    /** Containers set up and torn down beside each round's first. */
    private static final int BESIDE = 4;

    private static final String NETWORK = """
            {"name": "warm-up", "id": "%s", "driver": "gatun", "subnets": [{"subnet": "%s"}], "ipv6_enabled": false,
             "internal": false, "dns_enabled": false, "options": {}}""".formatted("0".repeat(64), SUBNET);

    private NetavarkWarmUp() {}

    /**
     * The rounds, against the serve on {@code socket}, with the containers in {@code first} (each
     * round's first) and {@code beside}; the number of containers set up. A failure ends the warm-up
     * (the serve starts without the rest, as for the publishes); {@code stopping} ends the rounds
     * between containers (the round's first is still torn down).
     */
    static int run(Path socket, NetworkNamespace first, NetworkNamespace beside, BooleanSupplier stopping) {
        String network = call(socket, List.of("create"), NETWORK).strip();
        int containers = 0;
        for (int round = 0; round < ROUNDS && !stopping.getAsBoolean(); round++) {
            String resident = setupInput(network, containers, "10.213.1.2", 15_000);
            call(socket, List.of("setup", first.path().toString()), resident);
            containers++;
            for (int k = 0; k < BESIDE && !stopping.getAsBoolean(); k++) {
                String other = setupInput(network, containers, "10.213.1.3", 15_100);
                call(socket, List.of("setup", beside.path().toString()), other);
                call(socket, List.of("teardown", beside.path().toString()), other);
                containers++;
            }
            call(socket, List.of("teardown", first.path().toString()), resident);
        }
        return containers;
    }

    /**
     * Netavark's input for the {@code n}th container, as Podman sends it: a 64-digit id, one
     * address, its ports from {@code firstPort} on.
     */
    private static String setupInput(String network, int n, String ip, int firstPort) {
        int width = n % 2 == 1 ? 32 : 1;
        List<String> ports = new ArrayList<>();
        for (int p = 0; p < width; p++) {
            ports.add("{\"host_ip\": \"\", \"container_port\": %d, \"host_port\": %d, \"range\": 1, \"protocol\": \"tcp\"}"
                    .formatted(80 + p, firstPort + p));
        }
        return """
                {"container_id": "%064x", "container_name": "warm-up-%d", "network": %s,
                 "network_options": {"interface_name": "eth0", "static_ips": ["%s"]}, "port_mappings": [%s]}"""
                .formatted(n + 1, n, network, ip, String.join(", ", ports));
    }

    /** One call of the plugin; its stdout. */
    private static String call(Path socket, List<String> args, String stdin) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = ServeClient.runNetavarkQuietly(socket, args, stdin.getBytes(StandardCharsets.UTF_8), out).orElse(-1);
        if (code != 0) {
            throw new IllegalStateException("the warm-up's netavark " + args.getFirst() + " on " + socket + " ended with "
                    + (code < 0 ? "no answer" : "exit code " + code + ": " + out.toString(StandardCharsets.UTF_8).strip()));
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
