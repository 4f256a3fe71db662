package dev.gatun.driver.bridge;

import dev.gatun.driver.PortListener;
import dev.gatun.driver.PortMapping;

import java.util.List;

/** A listener that writes each mapping it hears of as "+NETWORK PORT OWNER" or "-NETWORK PORT OWNER", in order. */
class HeardCommits implements PortListener {

    private final List<String> heard;

    HeardCommits(List<String> heard) {
        this.heard = heard;
    }

    @Override
    public void published(List<PortMapping> mappings) {
        mappings.forEach(m -> heard.add("+" + line(m)));
    }

    @Override
    public void unpublished(List<PortMapping> mappings) {
        mappings.forEach(m -> heard.add("-" + line(m)));
    }

    private static String line(PortMapping m) {
        return m.network() + " " + m.hostPort() + " " + m.owner();
    }
}
