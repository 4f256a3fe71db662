package dev.gatun.driver;

/**
 * A published mapping with what its counter saw: the packets and bytes sent to it since it was
 * published (replies not included). {@code traffic} is null when the mapping's network was made
 * without counters, or the driver keeps none.
 */
public record PortTraffic(PortMapping mapping, Traffic traffic) {

    /** Packets and bytes, as the kernel counted them (bytes of whole IP packets). */
    public record Traffic(long packets, long bytes) {}
}
