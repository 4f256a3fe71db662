package dev.gatun.cli.testing;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * Everything a Docker plugin test needs: a {@link DockerLab} whose namespace plays the host, an
 * outside namespace joined to it by a veth ({@link Lab#connectOutside}: host 192.0.2.1, outside
 * 192.0.2.2), and {@code gatun --netns LAB serve --docker-plugin NAME} with a name of its own.
 *
 * <p>{@link #close()} removes the containers while the plugin still answers (dockerd calls it
 * for each), stops serve, removes the socket file, the outside namespace and the lab, in that
 * order, and runs every step even when one fails.
 */
public final class PluginLab implements AutoCloseable {

    public final DockerLab docker;
    public final NetworkNamespace host;
    public final NetworkNamespace outside;
    public final String plugin;
    private final String outsideName;
    private GatunServe serve;

    private PluginLab(DockerLab docker, NetworkNamespace host, NetworkNamespace outside, String outsideName, String plugin) {
        this.docker = docker;
        this.host = host;
        this.outside = outside;
        this.outsideName = outsideName;
        this.plugin = plugin;
    }

    /**
     * What dockerd does for networking in {@link #start()}: {@code -Dgatun.pluginLab.networking=NAME}
     * (a {@link DockerLab.Networking}), else {@link DockerLab.Networking#DOCKER_BRIDGE}, the way a
     * real host runs dockerd: iptables on, with its FORWARD policy DROP.
     *
     */
    public static DockerLab.Networking defaultNetworking() {
        return DockerLab.Networking.valueOf(System.getProperty("gatun.pluginLab.networking", DockerLab.Networking.DOCKER_BRIDGE.name()));
    }

    public static PluginLab start() {
        return start(ns -> {});
    }

    /** Starts the lab; {@code beforeServe} runs with the lab's namespace before serve starts. */
    public static PluginLab start(Consumer<NetworkNamespace> beforeServe) {
        return start(defaultNetworking(), beforeServe);
    }

    /** Starts a lab whose dockerd does {@code networking} besides the plugin. */
    public static PluginLab start(DockerLab.Networking networking) {
        return start(networking, ns -> {});
    }

    /** Starts the lab; {@code beforeServe} runs with the lab's namespace before serve starts. */
    public static PluginLab start(DockerLab.Networking networking, Consumer<NetworkNamespace> beforeServe) {
        DockerLab docker = DockerLab.start(networking);
        PluginLab lab = null;
        try {
            NetworkNamespace host = NetworkNamespace.named(docker.namespace());
            String outsideName = FreshNamespaces.PREFIX + "out-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
            NetworkNamespace outside = NamedNamespaces.create(outsideName);
            lab = new PluginLab(docker, host, outside, outsideName, GatunServe.uniquePluginName());
            Lab.connectOutside(host, outside);
            beforeServe.accept(host);
            lab.serve = GatunServe.start(docker.namespace(), lab.plugin);
            return lab;
        } catch (RuntimeException | Error e) {
            try {
                if (lab != null) {
                    lab.close();
                } else {
                    docker.close();
                }
            } catch (RuntimeException | Error cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    public GatunServe serve() {
        return serve;
    }

    /** Starts serve again with the same plugin name, after the test stopped it. */
    public GatunServe restartServe() {
        if (serve != null && serve.isAlive()) {
            throw new IllegalStateException("serve is still running");
        }
        serve.close();
        serve = GatunServe.start(docker.namespace(), plugin);
        return serve;
    }

    public Path socket() {
        return GatunServe.socketOf(plugin);
    }

    /** The lab namespace's name, for {@code gatun --netns}. */
    public String ns() {
        return docker.namespace();
    }

    /** {@code docker network create -d PLUGIN ARGS...}: the network id. */
    public String createNetwork(String... args) {
        List<String> cmd = new ArrayList<>(List.of("network", "create", "-d", plugin));
        cmd.addAll(List.of(args));
        return docker.dockerOk(cmd.toArray(String[]::new)).out().strip();
    }

    @Override
    public void close() {
        List<Throwable> failures = new ArrayList<>();
        step(failures, () -> {
            if (serve != null && serve.isAlive()) {
                List<String> ids = docker.docker("ps", "-aq").out().lines().filter(s -> !s.isBlank()).toList();
                if (!ids.isEmpty()) {
                    List<String> rm = new ArrayList<>(List.of("rm", "-f"));
                    rm.addAll(ids);
                    docker.dockerOk(rm.toArray(String[]::new));
                }
            }
        });
        step(failures, () -> {
            if (serve != null) {
                serve.close();
            }
        });
        step(failures, () -> {
            if (NamedNamespaces.exists(outsideName)) {
                NamedNamespaces.delete(outsideName);
            }
        });
        step(failures, docker::close);
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("the plugin lab was not removed cleanly: " + failures.getFirst().getMessage(),
                    failures.getFirst());
            failures.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }

    private static void step(List<Throwable> failures, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException | AssertionError e) {
            failures.add(e);
        }
    }
}
