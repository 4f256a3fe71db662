package dev.gatun.cli.cni;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.GatunException;
import dev.gatun.cli.service.Drivers;
import dev.gatun.driver.NetworkDriver;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * gatun as a CNI plugin: one call (the CNI_* environment and the config on stdin) in, the
 * plugin's stdout and exit code out, run the same in a process of its own and inside
 * {@code gatun serve} for the thin client. Every verb of spec 1.1.0 (and the results of 0.3.0 to
 * 1.0.0). This class dispatches: VERSION and STATUS itself, ADD, DEL and CHECK to the
 * {@link MainAttachment} (no prevResult on ADD, in place of {@code bridge}) or the
 * {@link ChainedMappings} (after another plugin, in place of {@code portmap}), GC to both; and
 * turns every failure into the spec's error document, once.
 */
public final class CniPlugin {

    /** What a call printed and its exit code; {@code errorCode} is the CNI error's code, 0 on success. */
    public record Outcome(int exitCode, byte[] stdout, byte[] stderr, int errorCode) {}


    private final CniCall call;
    private final MainAttachment main;
    private final ChainedMappings chained;

    private CniPlugin(CniCall call) {
        this.call = call;
        this.main = new MainAttachment(call);
        this.chained = new ChainedMappings(call);
    }

    /** Runs one call: {@code environment} (only CNI_* is read) and the config on stdin. */
    public static Outcome run(Map<String, String> environment, byte[] stdin, Drivers drivers) {
        String version = null;
        StringBuilder log = new StringBuilder();
        try {
            CniEnv env = CniEnv.of(environment);
            if (env.command().equals("VERSION")) {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("cniVersion", CniVersion.LATEST);
                v.put("supportedVersions", CniVersion.SUPPORTED);
                return ok(v, log);
            }
            CniConfig config = CniConfig.parse(stdin);
            version = config.cniVersion();
            JsonNode result = new CniPlugin(new CniCall(env, config, drivers, log)).verb();
            return result == null ? new Outcome(0, new byte[0], bytes(log), 0) : ok(result, log);
        } catch (RuntimeException e) {
            CniError error = CniError.of(e);
            if (!(e instanceof CniError) && error.code() == CniError.FAILED && !(e instanceof GatunException)) {
                // Unexpected: a bug of ours. Keep the trace for the report.
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                log.append(trace);
            }
            String v = version != null ? version : CniConfig.versionOf(stdin);
            return new Outcome(1, json(error.document(v)), bytes(log), error.code());
        }
    }

    private static Outcome ok(Object document, StringBuilder log) {
        return new Outcome(0, json(document), bytes(log), 0);
    }

    private static byte[] bytes(StringBuilder log) {
        return log.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] json(Object document) {
        try {
            return (CniConfig.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(document) + "\n")
                    .getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private CniConfig config() {
        return call.config();
    }

    private JsonNode verb() {
        return switch (call.env().command()) {
            case "ADD" -> config().chained() ? chained.add() : main.add();
            case "DEL" -> {
                del();
                yield null;
            }
            case "CHECK" -> {
                check();
                yield null;
            }
            case "GC" -> {
                gc();
                yield null;
            }
            case "STATUS" -> {
                status();
                yield null;
            }
            default -> throw new CniError(CniError.BAD_ENVIRONMENT, "unknown CNI_COMMAND " + call.env().command());
        };
    }

    /** Removes all of the attachment, main or chained, even without port mappings or a namespace; again is no error. */
    private void del() {
        call.drivers().with(d -> {
            int removed = main.del(d) + chained.del(d);
            call.log("DEL " + call.owner() + ": " + (removed == 0 ? "nothing left" : "removed"));
            return null;
        });
        if (config().ipamType() != null) {
            Ipam.exec(config().ipamType(), "DEL", call.env(), config().raw());
        }
    }

    private void check() {
        if (!CniVersion.atLeast(config().cniVersion(), "0.4.0")) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION, "CHECK needs cniVersion 0.4.0 or later, not "
                    + config().cniVersion());
        }
        if (config().prevResult() == null) {
            throw CniConfig.invalid("CHECK needs the prevResult of the ADD it checks");
        }
        boolean isMain = config().ipamType() != null;
        if (isMain) {
            Ipam.exec(config().ipamType(), "CHECK", call.env(), config().raw());
        }
        List<String> missing = call.drivers().with(d -> isMain ? main.check(d) : chained.check(d));
        if (!missing.isEmpty()) {
            throw new CniError(CniError.MISSING, "attachment " + call.owner() + " of network " + config().name()
                    + " is missing: " + String.join("; ", missing));
        }
    }

    private void gc() {
        if (!CniVersion.atLeast(config().cniVersion(), "1.1.0")) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION, "GC needs cniVersion 1.1.0 or later, not "
                    + config().cniVersion());
        }
        Set<String> valid = config().validAttachments();
        if (valid == null) {
            throw CniConfig.invalid("GC needs cni.dev/valid-attachments (the attachments to keep)");
        }
        call.drivers().with(d -> {
            List<String> gone = new ArrayList<>(main.collect(d, valid));
            gone.addAll(ChainedMappings.collect(call, d, valid));
            call.log("GC " + config().name() + ": " + (gone.isEmpty() ? "nothing stale" : "removed "
                    + new LinkedHashSet<>(gone)));
            return null;
        });
        ipamOptional("GC");
    }

    private void status() {
        try {
            call.drivers().with(NetworkDriver::networks);
        } catch (RuntimeException e) {
            throw new CniError(CniError.NOT_AVAILABLE, "gatun cannot program networks here: " + CniError.of(e).getMessage());
        }
        ipamOptional("STATUS");
    }

    /**
     * GC and STATUS of the IPAM plugin, when it speaks spec 1.1.0 (as libcni, gatun asks it with
     * VERSION first); plugins made before 1.1.0 know neither verb: then skipped, and said.
     */
    private void ipamOptional(String verb) {
        if (config().ipamType() == null) {
            return;
        }
        ObjectNode version = Ipam.exec(config().ipamType(), "VERSION", call.env(),
                ("{\"cniVersion\": \"" + config().cniVersion() + "\"}").getBytes(StandardCharsets.UTF_8));
        boolean speaks = false;
        if (version != null) {
            for (JsonNode v : version.path("supportedVersions")) {
                speaks |= v.asText().equals("1.1.0");
            }
        }
        if (!speaks) {
            call.log("IPAM plugin " + config().ipamType() + " does not speak spec 1.1.0; its " + verb + " is skipped");
            return;
        }
        Ipam.exec(config().ipamType(), verb, call.env(), config().raw());
    }
}
