package dev.gatun.cli.cni;

import dev.gatun.GatunException;
import dev.gatun.cli.service.Failure;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A CNI error: the document {@code {cniVersion, code, msg, details}} a plugin prints on stdout
 * before it exits non-zero. Codes 1-99 are the spec's; 100 and up are gatun's own.
 */
public final class CniError extends RuntimeException {

    /** The config's cniVersion is not one gatun speaks, or the verb is not in it. */
    public static final int INCOMPATIBLE_VERSION = 1;
    /** A field of the config that gatun cannot honour. */
    public static final int UNSUPPORTED_FIELD = 2;
    /** A CNI_* variable is missing or invalid. */
    public static final int BAD_ENVIRONMENT = 4;
    /** Reading or running something failed (the IPAM plugin, for example). */
    public static final int IO_FAILURE = 5;
    /** The config on stdin is not JSON, or not a JSON object. */
    public static final int DECODE = 6;
    /** The config is JSON but a value is wrong. */
    public static final int INVALID_CONFIG = 7;
    /** A transient failure: the runtime may try again. */
    public static final int TRY_AGAIN = 11;
    /** STATUS: the plugin cannot add containers now. */
    public static final int NOT_AVAILABLE = 50;
    /** gatun's own: the kernel or a tool refused the change. */
    public static final int FAILED = 100;
    /** gatun's own: a host port or address is held by someone else. */
    public static final int CONFLICT = 101;
    /** gatun's own: a privilege, library or kernel feature is missing. */
    public static final int ENVIRONMENT = 102;
    /** gatun's own: CHECK found something of the attachment missing. */
    public static final int MISSING = 103;

    private final int code;
    private final String details;

    public CniError(int code, String msg) {
        this(code, msg, "");
    }

    public CniError(int code, String msg, String details) {
        super(msg, null, false, false);
        this.code = code;
        this.details = details == null ? "" : details;
    }

    public int code() {
        return code;
    }

    public String details() {
        return details;
    }

    /** The error a failure of the driver (or anything under it) is, in CNI's terms. */
    public static CniError of(RuntimeException e) {
        if (e instanceof CniError c) {
            return c;
        }
        String msg = e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getSimpleName() : e.getMessage();
        return switch (Failure.of(e)) {
            case USAGE, NOT_FOUND -> new CniError(INVALID_CONFIG, msg);
            case CONFLICT -> new CniError(CONFLICT, msg);
            case ENVIRONMENT -> new CniError(ENVIRONMENT, msg);
            case RETRYABLE -> new CniError(TRY_AGAIN, msg);
            // Not one of gatun's own failures: a bug, whose class name helps the report.
            case FAILED -> e instanceof GatunException ? new CniError(FAILED, msg) : new CniError(FAILED, msg, e.toString());
        };
    }

    /** The document, in the version the config asked for (the newest when it named none gatun knows). */
    public Map<String, Object> document(String cniVersion) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("cniVersion", cniVersion == null || !CniVersion.isSupported(cniVersion) ? CniVersion.LATEST : cniVersion);
        d.put("code", code);
        d.put("msg", getMessage());
        if (!details.isEmpty()) {
            d.put("details", details);
        }
        return d;
    }
}
