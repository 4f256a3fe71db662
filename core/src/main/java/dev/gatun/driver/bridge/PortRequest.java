package dev.gatun.driver.bridge;

import dev.gatun.driver.HostPortCheck;

import java.util.List;

/** What one caller asks of the {@link Publisher}: mappings to publish, or a selection to unpublish. */
sealed interface PortRequest permits PortRequest.Publish, PortRequest.Unpublish {

    /** The network whose name the request's mappings carry. */
    String network();

    /** {@code checkHost}: whether the host's sockets are asked if they hold a port (see {@link HostPortCheck}). */
    record Publish(String network, List<Publisher.Wanted> mappings, String owner, boolean checkHost)
            implements PortRequest {}

    record Unpublish(String network, Publisher.Selection selection) implements PortRequest {}
}
