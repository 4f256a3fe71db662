package dev.gatun.driver.bridge;

import dev.gatun.driver.ConflictException;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.SocketOwners;

import java.util.Set;

/**
 * A host port that a socket of the host holds. The publisher plans under its lock, so the
 * refusal it makes there names the socket only; {@link #namingItsProcess} names the process
 * too, which reads every process's descriptors in /proc, and the publisher's caller asks for it
 * once the lock is let go: a refused publish does not hold every other one up for that scan.
 */
final class HostPortInUseException extends ConflictException {

    private final String port;
    private final String hostName;
    private final BoundSocket socket;

    /** {@code port}: the host port as the user gave it ("*:8080/tcp"); {@code hostName}: the host namespace. */
    HostPortInUseException(String port, String hostName, BoundSocket socket) {
        this(port, hostName, socket, null);
    }

    private HostPortInUseException(String port, String hostName, BoundSocket socket, String process) {
        super("host port " + port + " is in use on the host in " + hostName + ": " + socket.describe(process)
                + "; publishing it would take that traffic away");
        this.port = port;
        this.hostName = hostName;
        this.socket = socket;
    }

    /** The same refusal naming the socket's process, when a process still holds it. */
    HostPortInUseException namingItsProcess() {
        String process = SocketOwners.of(Set.of(socket.inode())).get(socket.inode());
        return process == null ? this : new HostPortInUseException(port, hostName, socket, process);
    }
}
