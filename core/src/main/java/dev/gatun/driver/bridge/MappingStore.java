package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where published-port mappings live (nftables map elements, iptables DNAT rules). A view is a
 * consistent reading to plan one batch against; committing it fails with
 * {@link StaleViewException} if the store changed since, and the batch is planned again.
 */
interface MappingStore extends AutoCloseable {

    View begin();

    interface View {
        /** The mapping on the same host address, protocol and port (the network/owner fields of {@code key} are ignored). */
        Optional<PortMapping> get(PortMapping key);

        List<PortMapping> all();

        /** {@link #get} for many keys; a store that can ask for all of them at once overrides this. */
        default List<Optional<PortMapping>> getAll(List<PortMapping> keys) {
            return keys.stream().map(this::get).toList();
        }

        /** Removes {@code deletes} and adds {@code adds}, atomically where the backend allows it. */
        void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds);

        /**
         * {@link #commit(Collection, Collection)}, with the packet-filter entries of {@code networks}
         * added in the same transaction where they are not there already (see
         * {@link Firewall#entriesWithMappings}). Sent even when there are no mappings to change.
         */
        default void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds, Collection<BridgeRules> networks) {
            if (!networks.isEmpty()) {
                throw new UnsupportedOperationException("this store cannot add a network's entries");
            }
            commit(deletes, adds);
        }

        /**
         * Makes answers that change nothing (refusals, mappings in place already) stand: a view
         * read from the kernel is one moment's and needs nothing; a view from memory, which may
         * lag behind the kernel, checks that it does not, or throws {@link StaleViewException}.
         */
        default void confirm() {
        }
    }

    /**
     * Of {@code ports}, the UDP ports where clients that began sending before a publish may hold
     * conntrack entries that miss it (see {@link UdpHeard}); a store that cannot tell answers all.
     */
    default Set<Integer> udpPortsHeard(Collection<Integer> ports) {
        return Set.copyOf(ports);
    }

    @Override
    void close();

    /** The store changed after the view was read. */
    final class StaleViewException extends RuntimeException {
        StaleViewException(Throwable cause) {
            super(cause);
        }
    }
}
