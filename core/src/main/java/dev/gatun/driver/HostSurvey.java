package dev.gatun.driver;

import dev.gatun.driver.foreign.ForeignDrop;

import java.util.List;

/** What a driver finds on the host for its operators: every published port, and what stands in their way. */
public interface HostSurvey {

    /**
     * Every published port: {@link NetworkDriver#published published(null)}, then
     * {@link OutsidePorts#publishedOutside}, from one reading of the kernel.
     */
    List<PortMapping> allPublished();

    /** {@link #allPublished} with each mapping's counts ({@link NetworkDriver#traffic}; null outside gatun's networks). */
    List<PortTraffic> allTraffic();

    /**
     * For each published port that a socket of the host holds now (it came after the port was
     * published: a publish checks first), one line naming the port, the socket and its process.
     */
    List<String> hostPortsInUse();

    /**
     * Every place where another firewall of the host drops forwarded traffic, and whether the
     * driver's bridges get through it (see {@link dev.gatun.driver.foreign.ForeignFirewalls}).
     */
    List<ForeignDrop> foreignDrops();

    /**
     * Every interface of the host that routes 127.0.0.0/8, what of gatun's turned that on, and
     * whether gatun's drop of 127.0.0.0/8 that did not come from {@code lo} guards it.
     */
    List<LocalnetRoute> localnetRoutes();
}
