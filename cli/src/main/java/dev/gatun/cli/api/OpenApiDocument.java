package dev.gatun.cli.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The OpenAPI 3.1 document of the local API (openapi.json beside this class), served at {@link #PATH}. */
public final class OpenApiDocument {

    public static final String PATH = "/v1/openapi.json";

    /** Where it is in the jar and in the sources (cli/src/main/resources/...). */
    public static final String RESOURCE = "/dev/gatun/cli/api/openapi.json";

    private OpenApiDocument() {
    }

    /** Read at the first request for it, not at the serve's start. */
    private static final class Held {
        static final byte[] BYTES = read();
    }

    static byte[] bytes() {
        return Held.BYTES;
    }

    private static byte[] read() {
        try (InputStream in = OpenApiDocument.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the jar has no " + RESOURCE);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
