package dev.gatun.rtnl;

import java.net.InetAddress;

/** A route of the main table: destination (null for the default route), gateway (or null) and output link index. */
public record Route(Prefix destination, InetAddress gateway, int outputIndex, int table) {

    public boolean isDefault() {
        return destination == null;
    }
}
