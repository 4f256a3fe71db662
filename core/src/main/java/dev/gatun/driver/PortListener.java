package dev.gatun.driver;

import java.util.List;

/**
 * Told of each publish and unpublish a driver commits, on the committing thread and in the
 * order the kernel took the commits, before their callers get their results. It must be quick
 * and must not throw: those callers wait for it.
 */
public interface PortListener {

    /** These mappings are in place: a publish made them, or found them there already. */
    void published(List<PortMapping> mappings);

    /** These mappings were removed: by an unpublish, a detach or a network's deletion. */
    void unpublished(List<PortMapping> mappings);
}
