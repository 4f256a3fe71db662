package dev.gatun.driver;

import java.util.List;

/**
 * What a replacing publish did: {@code published}, the mappings now in place; {@code replaced},
 * the mappings of other owners whose host keys they took, as they were (owner and target).
 */
public record Replacement(List<PortMapping> published, List<PortMapping> replaced) {

    public Replacement {
        published = List.copyOf(published);
        replaced = List.copyOf(replaced);
    }
}
