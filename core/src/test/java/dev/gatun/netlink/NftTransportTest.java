package dev.gatun.netlink;

import dev.gatun.RetryableException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.libnftnl_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Table;
import dev.gatun.nft.Transaction;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.TestTables;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;


@ExtendWith(FreshNamespaces.class)
class NftTransportTest {

    @Test
    void tableCommittedInANamespaceIsListedByNftThereAndNotOnTheHost(NetworkNamespace a) {
        try (NftChannel channel = NftChannel.open(a); NftBatch batch = new NftBatch()) {
            TestTables.addIpTable(batch, "gatun_test");
            channel.commit(batch);
        }

        assertThat(Oracle.in(a, "nft", "list", "tables")).contains("table ip gatun_test");
        assertThat(Oracle.host("nft", "list", "tables")).doesNotContain("gatun_test");
    }

    @Test
    void failingSecondOperationIsNamedAndTheFirstLeavesNothingBehind(NetworkNamespace a) {
        try (NftChannel channel = NftChannel.open(a); NftBatch batch = new NftBatch()) {
            TestTables.addIpTable(batch, "gatun_first");
            TestTables.addChain(batch, kernel_h.NFPROTO_IPV4, "ip", "no_such_table", "c");

            NetlinkException e = Expect.thrown(NetlinkException.class, () -> channel.commit(batch));

            assertThat(e.isNotFound()).as(e.getMessage()).isTrue();
            assertThat(e.operation()).isEqualTo("add chain ip no_such_table c");
            assertThat(e.getMessage()).contains("ENOENT").contains("add chain ip no_such_table c in " + a.describe() + ":");
            // The kernel's NLMSGERR_ATTR_OFFS points at the table name it could not find (uAPI: NFTA_CHAIN_TABLE = 1).
            assertThat(e.rejectedAttribute()).isEqualTo("NFTA_CHAIN_TABLE (type 1)");
            assertThat(e.getMessage()).endsWith("rejected: NFTA_CHAIN_TABLE (type 1)");
        }
        assertThat(Oracle.in(a, "nft", "list", "tables")).doesNotContain("gatun_first");
    }

    @Test
    void theRejectedAttributeIsNamedFromTheRequestAsSentEvenAfterItsBatchWasClosed(NetworkNamespace a) {
        NetlinkException e = null;
        try (NftChannel channel = NftChannel.open(a)) {
            try (NftBatch batch = new NftBatch()) {
                TestTables.addChain(batch, kernel_h.NFPROTO_IPV4, "ip", "no_such_table", "c");
                channel.commit(batch);
            } catch (NetlinkException refused) {
                e = refused; // caught without AssertJ, which would ask for its message at once
            }
            assertThat(e != null).as("the commit of a chain of a missing table was refused").isTrue();
            // The name is made when first asked for: after the batch is gone and others went through the socket.
            for (int i = 0; i < 3; i++) {
                try (NftBatch other = new NftBatch()) {
                    TestTables.addIpTable(other, "gatun_reuse_" + i);
                    TestTables.addChain(other, kernel_h.NFPROTO_IPV4, "ip", "gatun_reuse_" + i, "chain_" + i);
                    channel.commit(other);
                }
            }
        }
        assertThat(e.getMessage()).endsWith("rejected: NFTA_CHAIN_TABLE (type 1)");
        assertThat(e.rejectedAttribute()).isEqualTo("NFTA_CHAIN_TABLE (type 1)");
    }

    @Test
    void commitGuardedByAStaleGenerationIsAConflictAndChangesNothing(NetworkNamespace a) {
        try (NftChannel channel = NftChannel.open(a)) {
            int before = channel.generation();
            try (NftBatch other = new NftBatch()) {
                TestTables.addIpTable(other, "gatun_other");
                channel.commit(other);
            }
            assertThat(channel.generation()).isNotEqualTo(before);

            try (NftBatch guarded = new NftBatch()) {
                TestTables.addIpTable(guarded, "gatun_guarded");
                guarded.guardGeneration(before);
                GenerationConflictException e =
                        Expect.thrown(GenerationConflictException.class, () -> channel.commit(guarded));
                assertThat(e.errnoName()).isEqualTo("ERESTART");
                assertThat(e.expectedGeneration()).isEqualTo(before);
                // Retrying from a fresh read cures it, unlike a refusal of the request itself.
                assertThat(e).isInstanceOf(RetryableException.class).isNotInstanceOf(NetlinkException.class);
                assertThat(e.mayHaveApplied()).isFalse();
            }
            assertThat(Oracle.in(a, "nft", "list", "tables")).doesNotContain("gatun_guarded");

            // The same guard with the current generation passes: the guard itself is not what fails.
            try (NftBatch current = new NftBatch()) {
                TestTables.addIpTable(current, "gatun_guarded");
                current.guardGeneration(channel.generation());
                channel.commit(current);
            }
            assertThat(Oracle.in(a, "nft", "list", "tables")).contains("table ip gatun_guarded");
        }
    }

    /** A reply that never comes is a failure of its own type: retryable, and the request may have been applied. */
    @Test
    void aMissingReplyIsARetryableTimeout(NetworkNamespace a) {
        try (NetlinkSocket socket = NetlinkSocket.open(NetlinkProtocol.NETFILTER, a); Arena arena = Arena.ofConfined()) {
            socket.setReceiveTimeout(Duration.ofMillis(200));
            MemorySegment buffer = arena.allocate(4096, 8);
            int seq = socket.reserveSequences(1);
            // GETGEN without NLM_F_ACK: the kernel answers with the generation, but never with the ACK waited for.
            MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(buffer, (short) kernel_h.NFT_MSG_GETGEN,
                    (short) libc_h.AF_UNSPEC, (short) 0, seq).reinterpret(4096);

            ReplyTimeoutException e = Expect.thrown(ReplyTimeoutException.class, () -> socket.transact(nlh,
                    NetlinkMessages.align(nlmsghdr.nlmsg_len(nlh)), seq, Operations.of("read the generation"),
                    NetlinkSocket.AckedRange.only(0), m -> { }));

            assertThat(e).isInstanceOf(RetryableException.class);
            assertThat(e.mayHaveApplied()).isTrue();
            assertThat(e.getMessage()).isEqualTo("no reply from the kernel to read the generation in " + a.describe() + " within 200 ms");
        }
    }

    /** Replies the receive buffer cannot hold are lost (ENOBUFS): a retryable failure, and the requests may have been applied. */
    @Test
    void repliesThatOverrunTheReceiveBufferAreARetryableFailure(NetworkNamespace a) {
        try (NetlinkSocket socket = NetlinkSocket.open(NetlinkProtocol.NETFILTER, a); Arena arena = Arena.ofConfined()) {
            socket.setReceiveBufferBytes(1024);
            int count = 500;
            MemorySegment buffer = arena.allocate(64 * 1024, 8);
            int first = socket.reserveSequences(count);
            long offset = 0;
            // Many GETGENs in one datagram, each answered with the generation: far more than 1 KiB back.
            for (int i = 0; i < count; i++) {
                MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(buffer.asSlice(offset), (short) kernel_h.NFT_MSG_GETGEN,
                        (short) libc_h.AF_UNSPEC, (short) 0, first + i).reinterpret(buffer.byteSize() - offset);
                offset += NetlinkMessages.align(nlmsghdr.nlmsg_len(nlh));
            }
            long length = offset;

            ReplyOverrunException e = Expect.thrown(ReplyOverrunException.class, () -> socket.pipeline(buffer, length, first,
                    new Operations(count, i -> "read the generation"), (i, m) -> { }, 0));

            assertThat(e).isInstanceOf(RetryableException.class);
            assertThat(e.mayHaveApplied()).isTrue();
            assertThat(e.errnoName()).isEqualTo("ENOBUFS");
        }
    }

    /**
     * A dump the ruleset changes under (a commit between two of its parts, made here from
     * inside the reading of the first part) is read again; one that keeps changing is given up
     * as a retryable failure of its own.
     */
    @Test
    void aDumpInterruptedByCommitsIsReadAgainAndAtLastGivenUpRetryably(NetworkNamespace a) {
        StringBuilder script = new StringBuilder();
        for (int i = 0; i < 2000; i++) {
            script.append("add table ip t").append(i).append('\n');
        }
        Oracle.Result made = Oracle.nftFile(a, script.toString());
        assertThat(made.exitCode()).as(made.stderr()).isZero();
        Table flip = Table.of(Family.IP, "flip");
        try (NftChannel channel = NftChannel.open(a); Nftables other = Nftables.open(a)) {
            boolean[] there = {false};
            Runnable commit = () -> {
                Transaction tx = other.transaction();
                (there[0] ? tx.delete(flip) : tx.add(flip)).commit();
                there[0] = !there[0];
            };
            int[] decoded = {0};
            List<Boolean> read = channel.dump("list tables", kernel_h.NFT_MSG_GETTABLE, libc_h.AF_UNSPEC, m -> {
                if (decoded[0]++ == 0) {
                    commit.run();
                }
                return true;
            });
            assertThat(read).as("every table once, from the second, whole read").hasSize(2001);
            assertThat(decoded[0]).as("the first read was cut short and read again").isGreaterThan(2001);

            DumpInterruptedException e = Expect.thrown(DumpInterruptedException.class, () -> channel.dump("list tables",
                    kernel_h.NFT_MSG_GETTABLE, libc_h.AF_UNSPEC, m -> {
                        commit.run();
                        return true;
                    }));
            assertThat(e).isInstanceOf(RetryableException.class);
            assertThat(e.mayHaveApplied()).isFalse();
            assertThat(e.getMessage()).contains("list tables").contains("interrupted the dump 10 times");
        }
    }

    @Test
    void errorsOfTheKernelCarryItsExtendedAckText(NetworkNamespace a) {
        try (NftChannel channel = NftChannel.open(a); NftBatch batch = new NftBatch()) {
            TestTables.addIpTable(batch, "gatun_dup");
            channel.commit(batch);
        }
        try (NftChannel channel = NftChannel.open(a); NftBatch batch = new NftBatch()) {
            // create (NLM_F_EXCL) of an existing table fails with EEXIST
            TestTables.addTable(batch, kernel_h.NFPROTO_IPV4, "ip", "gatun_dup", kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL);
            NetlinkException e = Expect.thrown(NetlinkException.class, () -> channel.commit(batch));
            assertThat(e.isAlreadyExists()).as(e.getMessage()).isTrue();
            assertThat(e.operation()).isEqualTo("add table ip gatun_dup");
        }
    }

    @Test
    void dumpListsWhatWasCommitted(NetworkNamespace a) {
        try (NftChannel channel = NftChannel.open(a)) {
            try (NftBatch batch = new NftBatch()) {
                for (int i = 0; i < 50; i++) {
                    TestTables.addIpTable(batch, "gatun_t" + i);
                }
                channel.commit(batch);
            }
            var tables = channel.dump("list tables", kernel_h.NFT_MSG_GETTABLE, kernel_h.NFPROTO_UNSPEC,
                    NetlinkMessages::type);
            assertThat(tables).hasSize(50);
        }
    }

    @Test
    void failureOfAnEarlyOperationIsNamedAndTheSocketStaysUsable(NetworkNamespace a) {
        try (NftChannel channel = NftChannel.open(a)) {
            try (NftBatch batch = new NftBatch()) {
                TestTables.addChain(batch, kernel_h.NFPROTO_IPV4, "ip", "no_such_table", "c");
                TestTables.addIpTable(batch, "gatun_second");
                TestTables.addIpTable(batch, "gatun_third");
                NetlinkException e = Expect.thrown(NetlinkException.class, () -> channel.commit(batch));
                assertThat(e.operation()).isEqualTo("add chain ip no_such_table c");
            }
            // The reply to the last message of the failed batch must not be taken for this one's.
            try (NftBatch next = new NftBatch()) {
                TestTables.addIpTable(next, "gatun_next");
                channel.commit(next);
            }
        }
        assertThat(Oracle.in(a, "nft", "list", "tables")).contains("gatun_next").doesNotContain("gatun_second");
    }
}
