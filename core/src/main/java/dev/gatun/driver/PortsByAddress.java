package dev.gatun.driver;

import java.net.InetAddress;
import java.util.List;
import java.util.Map;

/**
 * An owner's ports at each address of one container (its IPv4 and its IPv6 one), published as
 * one request by {@link NetworkDriver#publishAll}.
 *
 * @param network   the container's network
 * @param byAddress per container address, its ports; an address without ports is left out
 * @param owner     whose mappings these are; required with more than one address
 */
public record PortsByAddress(String network, Map<InetAddress, List<PortSpec>> byAddress, String owner) {}
