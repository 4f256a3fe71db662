package dev.gatun.cli.service;

import dev.gatun.driver.GatunDriver;
import dev.gatun.netns.NetworkNamespace;


/**
 * A command run inside {@code gatun serve} on behalf of a client: it works on the serve's
 * namespace and shares its driver (so concurrent clients commit together and the serve's
 * self-healing knows what they published) instead of opening a driver of its own.
 *
 * @param host       the namespace the serve runs for
 * @param driverName the serve's driver: "nftables", "iptables-legacy", ...
 * @param driver     the serve's driver, which commands use but never close
 */
public record Served(NetworkNamespace host, String driverName, GatunDriver driver) {

    /**
     * The command was sent to the wrong serve (another namespace or driver) or cannot run in
     * one: the client runs it itself. Never shown to a user.
     */
    public static final class Misdirected extends RuntimeException {
        public Misdirected(String why) {
            super(why, null, false, false);
        }
    }
}
