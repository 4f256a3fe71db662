package dev.gatun.testing;

import dev.gatun.netlink.NftBatch;
import dev.gatun.netlink.NftChannel;
import dev.gatun.netns.NetworkNamespace;

/**
 * Run by a test in a child JVM without CAP_NET_ADMIN, inside a throwaway namespace: tries one
 * commit (with the argument "read": one read of the ruleset generation) and prints the
 * exception's type and message on stdout.
 */
public final class UnprivilegedCommit {

    public static void main(String[] args) {
        try (NftChannel channel = NftChannel.open(NetworkNamespace.current()); NftBatch batch = new NftBatch()) {
            if (args.length > 0 && args[0].equals("read")) {
                System.out.println("generation " + channel.generation());
                return;
            }
            TestTables.addIpTable(batch, "gatun_unprivileged");
            channel.commit(batch);
            System.out.println("committed");
        } catch (RuntimeException e) {
            System.out.println(e.getClass().getName());
            System.out.println(e.getMessage());
            System.out.println("cause: " + e.getCause());
        }
    }
}
