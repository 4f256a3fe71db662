package dev.gatun;


/**
 * The kernel refused an operation for lack of privilege (EPERM or EACCES). The message is one
 * sentence that says what is missing; there is no chain of causes to read through.
 */
public class PrivilegeException extends ErrnoException {

    public PrivilegeException(String operation, int errno) {
        this(operation, errno, null);
    }

    /** As above, with the kernel's own words (its extended-ACK text) kept at the end of the sentence. */
    public PrivilegeException(String operation, int errno, String kernelMessage) {
        super(operation, errno, "gatun needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to " + operation
                + ", and the kernel refused it with " + nameOf(errno)
                + (kernelMessage == null || kernelMessage.isBlank() ? "" : " (" + kernelMessage.strip().replace('\n', ' ') + ")"));
    }
}
