package dev.gatun.driver;

import java.net.InetAddress;
import java.util.List;

/**
 * An owner's ports at one container address, as a publish, replace or unpublish asks for them
 * ({@link NetworkDriver}), or one outside the driver's networks ({@link OutsidePorts}).
 * Checked by the driver before anything is sent, so that its errors name the operation.
 *
 * @param network     the network of {@code containerIp}; for ports outside the driver's networks,
 *                    the name the returned mappings carry
 * @param containerIp where the ports lead
 * @param ports       the ports; for an unpublish, empty means all of the owner's to that address
 * @param owner       whose mappings these are, or null
 */
public record PortRequest(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {}
