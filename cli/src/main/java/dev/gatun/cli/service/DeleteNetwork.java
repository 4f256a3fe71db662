package dev.gatun.cli.service;

/** Delete a network; with {@code force}, detach its endpoints first. */
public record DeleteNetwork(String name, boolean force) {
    public DeleteNetwork {
        Names.require(name, "network");
    }
}
