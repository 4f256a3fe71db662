package dev.gatun.cli.service;

/**
 * List published ports: of one network, or ({@code network} null) of all, with those published
 * to addresses outside gatun's networks (a CNI chain after another plugin's bridge).
 */
public record ListPorts(String network) {
    public static final ListPorts ALL = new ListPorts(null);

    public ListPorts {
        if (network != null) {
            Names.require(network, "network");
        }
    }
}
