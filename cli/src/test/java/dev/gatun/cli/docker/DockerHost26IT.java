package dev.gatun.cli.docker;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DockerHostIT} against Debian 13's dockerd 26 and containerd 1.7, run from the test bed
 * of today's engines: the same unchanged {@code docker run -p} commands, the same judges.
 */
class DockerHost26IT extends DockerHostIT {

    @Override
    boolean inBed() {
        return true;
    }

    @Test
    void theDaemonIsDockerd26() throws Exception {
        inLab((lab, outside) -> assertThat(lab.dockerOk("version", "--format", "{{.Server.Version}}").out().strip())
                .startsWith("26."));
    }
}
