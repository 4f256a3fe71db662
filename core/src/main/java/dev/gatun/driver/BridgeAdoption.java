package dev.gatun.driver;

import java.util.List;

/** Bridges another program made (dockerd's) whose packet filter gatun keeps as of its own networks. */
public interface BridgeAdoption {

    /**
     * Keeps the packet filter of another program's bridge as of a network of gatun's (see
     * {@link AdoptedBridge}); the bridge's alias remembers it. Its route_localnet is turned on
     * (127.0.0.1 to its containers' ports). Adopting it again with the same values changes
     * nothing (but a route_localnet turned off since); with others, replaces them.
     */
    void adoptBridge(AdoptedBridge bridge);

    /**
     * Takes an adopted bridge's entries out of the packet filter, and turns its route_localnet
     * off if gatun turned it on; the bridge stays (or is gone already).
     */
    void releaseBridge(AdoptedBridge bridge);

    /** The bridges adopted, read from the kernel. */
    List<AdoptedBridge> adoptedBridges();
}
