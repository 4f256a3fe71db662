package dev.gatun.cli.dockerd;

import dev.gatun.EnvironmentException;

/** dockerd could not be reached or answered what gatun cannot use: the follower tries again later. */
final class DockerEngineException extends EnvironmentException {
    DockerEngineException(String message, Throwable cause) {
        super(message, cause);
    }

    DockerEngineException(String message) {
        super(message);
    }
}
