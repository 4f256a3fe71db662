package dev.gatun.cli.testing;

import dev.gatun.testing.Daemons;
import dev.gatun.testing.Oracle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The root filesystem of every lab's container image, made without a registry or a network:
 * the host's busybox-static (Debian 12's: Debian 13's has no nc) with every applet linked in
 * /bin, and {@code /bin/udpreply PORT TEXT}, a static UDP server that answers each datagram with
 * a fixed text (busybox has none). Made on the host with chroot, gcc (libc6-dev) and tar.
 */
public final class BusyboxRootfs {

    /** udpreply's C source, built with {@code gcc -static}. */
    public static final String UDP_REPLY_SOURCE = """
            #include <netinet/in.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <sys/socket.h>
            int main(int argc, char **argv) {
                if (argc != 3) {
                    fprintf(stderr, "usage: udpreply PORT TEXT\\n");
                    return 2;
                }
                int s = socket(AF_INET, SOCK_DGRAM, 0);
                struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short) atoi(argv[1]))};
                if (s < 0 || bind(s, (struct sockaddr *) &a, sizeof a) != 0) {
                    perror("udpreply");
                    return 1;
                }
                for (char buf[2048];;) {
                    struct sockaddr_in peer;
                    socklen_t len = sizeof peer;
                    if (recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *) &peer, &len) >= 0)
                        sendto(s, argv[2], strlen(argv[2]), 0, (struct sockaddr *) &peer, len);
                }
            }
            """;

    private BusyboxRootfs() {}

    /** Makes the root filesystem as {@code dir}/rootfs, with {@code moreDirs} beside bin, etc, tmp and root; its path. */
    public static Path make(Path dir, String... moreDirs) {
        Path rootfs = dir.resolve("rootfs");
        Path source = dir.resolve("udpreply.c");
        try {
            List<String> dirs = new ArrayList<>(List.of("bin", "etc", "tmp", "root"));
            dirs.addAll(List.of(moreDirs));
            for (String d : dirs) {
                Files.createDirectories(rootfs.resolve(d));
            }
            Files.copy(Path.of("/bin/busybox"), rootfs.resolve("bin/busybox"));
            Files.writeString(source, UDP_REPLY_SOURCE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        host("busybox --install in the image (is /bin/busybox the static one from busybox-static?)",
                Daemons.toolPath("chroot"), rootfs.toString(), "/bin/busybox", "--install", "-s", "/bin");
        host("gcc -static udpreply.c (needs libc6-dev)", Daemons.toolPath("gcc"), "-static", "-O2", "-o",
                rootfs.resolve("bin/udpreply").toString(), source.toString());
        return rootfs;
    }

    /** {@link #make}, then the whole of it as {@code dir}/rootfs.tar, for {@code docker import} and {@code podman import}. */
    public static Path tar(Path dir) {
        Path rootfs = make(dir);
        Path tar = dir.resolve("rootfs.tar");
        host("tar of the image", Daemons.toolPath("tar"), "-C", rootfs.toString(), "-cf", tar.toString(), ".");
        return tar;
    }

    /** Runs a tool on the host; fails the test, saying {@code what}, when it fails. */
    public static void host(String what, String... command) {
        Oracle.Result r = Oracle.run(List.of(command));
        if (r.exitCode() != 0) {
            throw new AssertionError(what + ": " + String.join(" ", command) + " exited " + r.exitCode() + ": " + r.stderr());
        }
    }
}
