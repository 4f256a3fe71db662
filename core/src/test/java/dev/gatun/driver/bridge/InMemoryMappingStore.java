package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortMapping.HostKey;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.ReplyTimeoutException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A mapping store in memory, for the planner and the commit loop without root or a kernel. It
 * keeps a generation as nftables does: a commit from a view read before another change is
 * refused as stale. Like the kernel's map, it refuses to add a key it holds (EEXIST) or to
 * delete one it lacks (ENOENT), so a doubled or lost mapping fails the test at once. Switches
 * make the next read stale (another writer commits between it and its commit), or lose a
 * commit's reply.
 */
final class InMemoryMappingStore implements MappingStore {

    private final Map<HostKey, PortMapping> mappings = new LinkedHashMap<>();
    private int generation;
    /** Writers to run between the next reads and their commits, one per read. */
    private final List<Consumer<InMemoryMappingStore>> intruders = new ArrayList<>();
    private boolean everyReadStale;
    private final List<Boolean> lostReplies = new ArrayList<>();
    int reads;
    int commits;

    /** Another writer's mapping: changes the generation as its commit would. */
    void put(PortMapping m) {
        mappings.put(m.hostKey(), m);
        generation++;
    }

    /** Another writer removes the mapping on {@code m}'s key. */
    void remove(PortMapping m) {
        mappings.remove(m.hostKey());
        generation++;
    }

    /** Makes the next read stale: another writer commits nothing of interest after it. */
    void staleNextRead() {
        staleNextRead(s -> s.generation++);
    }

    /** Makes the next read stale: {@code writer} changes the store after it, before its commit. */
    void staleNextRead(Consumer<InMemoryMappingStore> writer) {
        intruders.add(writer);
    }

    /** Every read goes stale: a writer that never stops. */
    void staleEveryRead() {
        everyReadStale = true;
    }

    /** The next commit's reply is lost: applied first or not, and its caller hears a timeout either way. */
    void loseNextReply(boolean applied) {
        lostReplies.add(applied);
    }

    List<PortMapping> mappings() {
        return List.copyOf(mappings.values());
    }

    @Override
    public View begin() {
        reads++;
        int read = generation;
        Map<HostKey, PortMapping> snapshot = new LinkedHashMap<>(mappings);
        Consumer<InMemoryMappingStore> intruder = everyReadStale ? s -> s.generation++
                : intruders.isEmpty() ? null : intruders.removeFirst();
        return new View() {
            @Override
            public Optional<PortMapping> get(PortMapping key) {
                return Optional.ofNullable(snapshot.get(key.hostKey()));
            }

            @Override
            public List<PortMapping> all() {
                return List.copyOf(snapshot.values());
            }

            @Override
            public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
                commits++;
                if (intruder != null) {
                    intruder.accept(InMemoryMappingStore.this);
                }
                if (generation != read) {
                    throw new StaleViewException(new GenerationConflictException("commit " + commits, 0, read));
                }
                Boolean applied = lostReplies.isEmpty() ? null : lostReplies.removeFirst();
                if (applied == null || applied) {
                    apply(deletes, adds);
                }
                if (applied != null) {
                    throw new ReplyTimeoutException("commit " + commits, Duration.ofMillis(1));
                }
            }
        };
    }

    /** All or nothing, as one nftables transaction. */
    private void apply(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
        Map<HostKey, PortMapping> next = new LinkedHashMap<>(mappings);
        for (PortMapping d : deletes) {
            if (next.remove(d.hostKey()) == null) {
                throw new IllegalStateException("ENOENT: delete of " + d.describeHost() + ", which the store lacks");
            }
        }
        for (PortMapping a : adds) {
            if (next.putIfAbsent(a.hostKey(), a) != null) {
                throw new IllegalStateException("EEXIST: add of " + a.describeHost() + ", which the store holds");
            }
        }
        mappings.clear();
        mappings.putAll(next);
        generation++;
    }

    @Override
    public void close() {
    }
}
