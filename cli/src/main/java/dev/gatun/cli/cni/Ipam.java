package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The IPAM plugin of a config, run as the reference {@code bridge} runs it: the executable named
 * by {@code ipam.type}, found in a directory of CNI_PATH, given the same stdin and the same CNI_*
 * environment with CNI_COMMAND set to the verb. Its error documents pass through unchanged.
 */
final class Ipam {

    private static final long TIMEOUT_SECONDS = 60;

    private Ipam() {}

    /** Runs {@code verb} of the IPAM plugin; its result (ADD) or null (an empty stdout). */
    static ObjectNode exec(String type, String verb, CniEnv env, byte[] stdin) {
        Path plugin = find(type, env.path());
        ProcessBuilder pb = new ProcessBuilder(plugin.toString());
        Map<String, String> e = pb.environment();
        e.keySet().removeIf(k -> k.startsWith("CNI_"));
        e.putAll(env.variables());
        e.put("CNI_COMMAND", verb);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        byte[] out;
        int code;
        try {
            Process p = pb.start();
            CompletableFuture<byte[]> reading = CompletableFuture.supplyAsync(() -> {
                try (InputStream in = p.getInputStream()) {
                    return in.readAllBytes();
                } catch (IOException x) {
                    return new byte[0];
                }
            }, Thread::startVirtualThread);
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin);
            } catch (IOException ignored) {
                // the plugin stopped reading; its answer says why
            }
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new CniError(CniError.IO_FAILURE, "IPAM plugin " + plugin + " (" + verb + ") did not finish in "
                        + TIMEOUT_SECONDS + " s");
            }
            // The pipe closes with the plugin, unless a process it started still holds it.
            out = reading.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            code = p.exitValue();
        } catch (TimeoutException | ExecutionException x) {
            throw new CniError(CniError.IO_FAILURE, "IPAM plugin " + plugin + " (" + verb + ") exited, but its output could not be read: " + x);
        } catch (IOException x) {
            throw new CniError(CniError.IO_FAILURE, "cannot run IPAM plugin " + plugin + ": " + x.getMessage());
        } catch (InterruptedException x) {
            Thread.currentThread().interrupt();
            throw new CniError(CniError.IO_FAILURE, "interrupted while IPAM plugin " + plugin + " ran " + verb);
        }
        String text = new String(out, StandardCharsets.UTF_8).strip();
        if (code != 0) {
            throw failure(plugin, verb, code, text);
        }
        if (text.isEmpty()) {
            return null;
        }
        try {
            JsonNode r = CniConfig.JSON.readTree(text);
            if (r instanceof ObjectNode o) {
                return o;
            }
        } catch (IOException ignored) {
            // below
        }
        throw new CniError(CniError.DECODE, "IPAM plugin " + plugin + " answered " + verb + " with something that is "
                + "not a JSON object: " + abbreviate(text));
    }

    /** The plugin's own error document, passed on with its code; a message when it printed none. */
    private static CniError failure(Path plugin, String verb, int exit, String text) {
        try {
            JsonNode r = CniConfig.JSON.readTree(text);
            if (r != null && r.path("code").isIntegralNumber()) {
                return new CniError(r.get("code").asInt(), "IPAM plugin " + plugin.getFileName() + " (" + verb + "): "
                        + r.path("msg").asText(""), r.path("details").asText(""));
            }
        } catch (IOException | RuntimeException ignored) {
            // not a document
        }
        return new CniError(CniError.IO_FAILURE, "IPAM plugin " + plugin + " failed " + verb + " with exit code " + exit
                + (text.isEmpty() ? "" : ": " + abbreviate(text)));
    }

    /** The executable named {@code type} in the first directory of CNI_PATH that has it. */
    static Path find(String type, String cniPath) {
        if (cniPath != null) {
            for (String dir : cniPath.split(":")) {
                if (dir.isEmpty()) {
                    continue;
                }
                Path p = Path.of(dir, type);
                if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        throw new CniError(CniError.INVALID_CONFIG, "IPAM plugin '" + type + "' is not in CNI_PATH ("
                + (cniPath == null ? "unset" : cniPath) + ")");
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
