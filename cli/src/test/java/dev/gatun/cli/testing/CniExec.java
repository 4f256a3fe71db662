package dev.gatun.cli.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.Streams;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gatun CNI plugin run exactly as libcni runs a plugin: the executable named {@code gatun}
 * in a CNI bin directory of the test's own ({@code gatun cni install --bin-dir}), started inside
 * the host namespace ({@code nsenter --net}) with the CNI_* variables, the config on stdin, and
 * its stdout and exit code read back. CNI_PATH is that directory, then the reference plugins'.
 */
public final class CniExec {

    /** How long a command's output may stay open after it exited (a child it left may hold it). */
    private static final Duration OUTPUT_OPEN = Duration.ofSeconds(10);

    public static final ObjectMapper JSON = new ObjectMapper();
    public static final String PLUGINS = "/usr/lib/cni";

    public final NetworkNamespace host;
    public final Path dir;
    public final Path bin;
    /** How many times gatun itself was run (a served test compares it with the serve's log). */
    public final AtomicInteger gatunRuns = new AtomicInteger();

    public CniExec(NetworkNamespace host, Path dir) {
        this.host = host;
        this.dir = dir;
        this.bin = dir.resolve("bin");
        GatunCli.ok("cni", "install", "--bin-dir", bin.toString());
        if (!Files.isExecutable(Path.of(PLUGINS, "host-local"))) {
            throw new AssertionError("the reference CNI plugins are missing (" + PLUGINS
                    + "/host-local); ci/setup installs containernetworking-plugins");
        }
    }

    public String cniPath() {
        return bin + ":" + PLUGINS;
    }

    public record Result(int code, String stdout, String stderr) {
        public JsonNode json() {
            try {
                return JSON.readTree(stdout);
            } catch (IOException e) {
                throw new AssertionError("the plugin printed no JSON: " + stdout + " / " + stderr, e);
            }
        }

        /** The error document's code; fails unless the plugin failed with one. */
        public int errorCode() {
            if (code == 0) {
                throw new AssertionError("the plugin succeeded, but an error was expected: " + stdout);
            }
            return json().path("code").asInt(-1);
        }

        public Result ok() {
            if (code != 0) {
                throw new AssertionError("the plugin exited " + code + "\nstdout: " + stdout + "\nstderr: " + stderr);
            }
            return this;
        }
    }

    /** Runs the plugin {@code plugin} (gatun, or a reference plugin by name) with these variables (null: unset). */
    public Result exec(String plugin, Map<String, String> vars, String stdin) {
        return exec(List.of(), plugin, vars, stdin);
    }

    /** {@link #exec(String, Map, String)} under {@code wrapper} (a command that runs the plugin: setpriv, say). */
    public Result exec(List<String> wrapper, String plugin, Map<String, String> vars, String stdin) {
        Path exe = plugin.equals("gatun") ? bin.resolve("gatun") : Path.of(PLUGINS, plugin);
        if (plugin.equals("gatun")) {
            gatunRuns.incrementAndGet();
        }
        List<String> command = new ArrayList<>(List.of("nsenter", "--net=" + host.path()));
        command.addAll(wrapper);
        command.add(exe.toString());
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().keySet().removeIf(k -> k.startsWith("CNI_"));
        vars.forEach((k, v) -> {
            if (v != null) {
                pb.environment().put(k, v);
            }
        });
        try {
            Process p = pb.start();
            CompletableFuture<String> out = Streams.readAsync(p.getInputStream());
            CompletableFuture<String> err = Streams.readAsync(p.getErrorStream());
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // it stopped reading
            }
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError(plugin + " " + vars + " did not finish within 180 s");
            }
            return new Result(p.exitValue(), Bounded.get(out, OUTPUT_OPEN, "stdout after the exit"), Bounded.get(err, OUTPUT_OPEN, "stderr after the exit"));
        } catch (IOException e) {
            throw new AssertionError("cannot run " + exe, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** gatun with CNI_COMMAND {@code verb} for the attachment {@code id}/{@code ifname} in {@code netns} (null: none). */
    public Result call(String verb, String id, NetworkNamespace netns, String ifname, String config) {
        return exec("gatun", vars(verb, id, netns, ifname), config);
    }

    public Map<String, String> vars(String verb, String id, NetworkNamespace netns, String ifname) {
        Map<String, String> v = new HashMap<>();
        v.put("CNI_COMMAND", verb);
        v.put("CNI_CONTAINERID", id);
        v.put("CNI_NETNS", netns == null ? null : netns.path().toString());
        v.put("CNI_IFNAME", ifname);
        v.put("CNI_PATH", cniPath());
        return v;
    }

    /** A main-plugin config of {@code version} for network {@code name}, host-local in the test's directory, and these ports. */
    public String config(String version, String name, String subnet, String portMappings) {
        return """
                {"cniVersion": "%s", "name": "%s", "type": "gatun", "bridge": "%s", "isGateway": true, "ipMasq": true,
                 "hairpinMode": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "%s"}]], "routes": [{"dst": "0.0.0.0/0"}],
                          "dataDir": "%s"},
                 "runtimeConfig": {"portMappings": [%s]}}""".formatted(version, name, "cnt-" + name, subnet,
                dir.resolve("ipam"), portMappings == null ? "" : portMappings);
    }

    /** {@code config} with {@code prevResult} set, as libcni sends it to CHECK and DEL. */
    public static String withPrevResult(String config, JsonNode prevResult) {
        try {
            ObjectNode c = (ObjectNode) JSON.readTree(config);
            c.set("prevResult", prevResult);
            return JSON.writeValueAsString(c);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** {@code config} with top-level keys replaced. */
    public static String with(String config, Map<String, Object> keys) {
        try {
            ObjectNode c = (ObjectNode) JSON.readTree(config);
            keys.forEach((k, v) -> c.set(k, JSON.valueToTree(v)));
            return JSON.writeValueAsString(c);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * A plugin of the test's own, {@code name} in the bin directory (first in CNI_PATH): a shell
     * script with {@code body} after its #! line.
     */
    public Path fakePlugin(String name, String body) {
        Path p = bin.resolve(name);
        try {
            Files.writeString(p, "#!/bin/sh\n" + body);
            p.toFile().setExecutable(true);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return p;
    }

    /** The addresses host-local holds for network {@code name}: its reservation files. */
    public List<String> reservations(String name) {
        Path d = dir.resolve("ipam").resolve(name);
        List<String> out = new ArrayList<>();
        if (Files.isDirectory(d)) {
            try (var files = Files.list(d)) {
                files.map(f -> f.getFileName().toString()).filter(f -> f.matches("[0-9a-f.:]+") && f.contains("."))
                        .sorted().forEach(out::add);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
        return out;
    }

}
