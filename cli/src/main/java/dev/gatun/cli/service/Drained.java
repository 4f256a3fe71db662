package dev.gatun.cli.service;

import dev.gatun.driver.PortMapping;

import java.util.List;

/** What an unpublish that drained removed, and how many established connections remained at its timeout. */
public record Drained(List<PortMapping> removed, int remaining) {

    public Drained {
        removed = List.copyOf(removed);
    }
}
