package dev.gatun.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/** Reading a child process's output without a deadlock: each stream drained on a thread of its own. */
public final class Streams {

    private Streams() {}

    /** All of {@code in}, as UTF-8, once it ends; what could not be read is said in the text. */
    public static CompletableFuture<String> readAsync(InputStream in) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try (in) {
                f.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                f.complete("(unreadable: " + e.getMessage() + ")");
            }
        });
        return f;
    }
}
