package dev.gatun.cli.bed;

import dev.gatun.testing.Oracle;

import java.util.List;

/** A UDP server for test images, answering each datagram with a fixed text: busybox has none. */
public final class UdpReply {

    private UdpReply() {}

    /** Its C source: {@code udpreply PORT TEXT}, built with {@code gcc -static}. */
    public static final String SOURCE = """
            #include <netinet/in.h>
            #include <stdlib.h>
            #include <string.h>
            #include <sys/socket.h>
            int main(int argc, char **argv) {
                if (argc != 3) return 2;
                int s = socket(AF_INET, SOCK_DGRAM, 0);
                struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
                if (s < 0 || bind(s, (struct sockaddr *) &a, sizeof a) != 0) return 1;
                for (char buf[1500];;) {
                    struct sockaddr_in peer;
                    socklen_t len = sizeof peer;
                    if (recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *) &peer, &len) >= 0)
                        sendto(s, argv[2], strlen(argv[2]), 0, (struct sockaddr *) &peer, len);
                }
            }
            """;

    /** Runs {@code cmd} on the host (building an image's files); fails the test when it fails. */
    public static void host(List<String> cmd) {
        Oracle.Result r = Oracle.run(cmd);
        if (r.exitCode() != 0) {
            throw new AssertionError(cmd + " exited " + r.exitCode() + ": " + r.stderr());
        }
    }
}
