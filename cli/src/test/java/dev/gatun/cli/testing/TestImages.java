package dev.gatun.cli.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.testing.Oracle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The two images of the containerd tests, written by hand as one OCI image layout archive
 * (nothing is pulled): {@link #PAUSE}, whose {@code /pause} only waits for a signal, as the
 * sandbox image; {@link #BUSYBOX}, busybox-static with {@code /bin/udpreply PORT TEXT}, for the
 * pods' servers. Both share one uncompressed layer.
 */
public final class TestImages {

    public static final String PAUSE = "localhost/gatun-test/pause:1";
    public static final String BUSYBOX = "localhost/gatun-test/busybox:1";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PAUSE_SOURCE = """
            #include <signal.h>
            #include <unistd.h>
            static void stop(int s) { (void) s; _exit(0); }
            int main(void) { signal(SIGTERM, stop); signal(SIGINT, stop); for (;;) pause(); }
            """;

    private TestImages() {}

    /** Builds the archive in {@code work} (gcc, tar and chroot run) and returns its path. */
    public static Path archive(Path work) {
        Path rootfs = BusyboxRootfs.make(work, "proc", "sys", "dev");
        Path layout = work.resolve("oci");
        try {
            Files.writeString(work.resolve("pause.c"), PAUSE_SOURCE);
            Files.createDirectories(layout.resolve("blobs/sha256"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Oracle.host("gcc", "-static", "-O2", "-o", rootfs.resolve("pause").toString(),
                work.resolve("pause.c").toString());
        Path layer = work.resolve("layer.tar");
        Oracle.host("tar", "--sort=name", "--owner=0", "--group=0", "-C", rootfs.toString(), "-cf",
                layer.toString(), ".");
        try {
            Blob layerBlob = store(layout, Files.readAllBytes(layer));
            ArrayNode manifests = JSON.createArrayNode();
            manifests.add(image(layout, layerBlob, PAUSE, "/pause"));
            manifests.add(image(layout, layerBlob, BUSYBOX, "/bin/sh"));
            ObjectNode index = JSON.createObjectNode().put("schemaVersion", 2);
            index.set("manifests", manifests);
            Files.writeString(layout.resolve("index.json"), JSON.writeValueAsString(index));
            Files.writeString(layout.resolve("oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path archive = work.resolve("images.tar");
        Oracle.host("tar", "-C", layout.toString(), "-cf", archive.toString(), ".");
        return archive;
    }

    private record Blob(String digest, long size) {}

    /** The config and manifest of one image over the shared layer; its descriptor for the index. */
    private static ObjectNode image(Path layout, Blob layer, String name, String command) throws IOException {
        ObjectNode config = JSON.createObjectNode().put("architecture", "amd64").put("os", "linux");
        ObjectNode run = config.putObject("config");
        run.putArray("Env").add("PATH=/bin");
        run.putArray("Cmd").add(command);
        ObjectNode rootfs = config.putObject("rootfs").put("type", "layers");
        rootfs.putArray("diff_ids").add(layer.digest());
        Blob configBlob = store(layout, JSON.writeValueAsBytes(config));

        ObjectNode manifest = JSON.createObjectNode().put("schemaVersion", 2)
                .put("mediaType", "application/vnd.oci.image.manifest.v1+json");
        manifest.set("config", descriptor("application/vnd.oci.image.config.v1+json", configBlob));
        manifest.putArray("layers").add(descriptor("application/vnd.oci.image.layer.v1.tar", layer));
        Blob manifestBlob = store(layout, JSON.writeValueAsBytes(manifest));

        ObjectNode d = descriptor("application/vnd.oci.image.manifest.v1+json", manifestBlob);
        d.putObject("platform").put("architecture", "amd64").put("os", "linux");
        // ctr images import names an image after this annotation.
        d.putObject("annotations").put("io.containerd.image.name", name);
        return d;
    }

    private static ObjectNode descriptor(String mediaType, Blob blob) {
        return JSON.createObjectNode().put("mediaType", mediaType).put("digest", blob.digest()).put("size", blob.size());
    }

    private static Blob store(Path layout, byte[] content) throws IOException {
        String hex;
        try {
            hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
        Files.write(layout.resolve("blobs/sha256").resolve(hex), content);
        return new Blob("sha256:" + hex, content.length);
    }
}
