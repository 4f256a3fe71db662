package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What reads the answers of one exchange on a {@link NetlinkSocket}: each message received (a
 * stale one, to an earlier exchange on the socket, included: the reader skips it by its sequence
 * number), until it has every answer it waits for. One kind for each way the kernel answers: ACKs
 * or errors for a batch or a request ({@link Acks}), one reply or error per lookup
 * ({@link Answers}), a dump's messages up to its end ({@link Dumped}).
 */
sealed interface Replies permits Replies.Acks, Replies.Answers, Replies.Dumped {

    void message(MemorySegment m);

    boolean done();

        /**
         * A batch's or a request's answers: an ACK or error for each message in {@code acked}, an
         * error only for the others; other messages go to {@code onReply}. The first error is kept.
         */
        final class Acks implements Replies {
            private final int first;
            private final int count;
            private final NetlinkSocket.AckedRange acked;
            private final Consumer<MemorySegment> onReply;
            private final ExchangeFailure failure = new ExchangeFailure();
            private int pending;

            Acks(int first, int count, NetlinkSocket.AckedRange acked, Consumer<MemorySegment> onReply) {
                this.first = first;
                this.count = count;
                this.acked = acked;
                this.onReply = onReply;
                this.pending = acked.count();
            }

            @Override
            public void message(MemorySegment m) {
                if (NetlinkMessages.type(m) == kernel_h.NLMSG_ERROR) {
                    int index = NetlinkMessages.errorSequence(m) - first;
                    if (index < 0 || index >= count) {
                        return; // a stale reply to something earlier on this socket
                    }
                    if (acked.contains(index)) {
                        pending--;
                    }
                    int err = NetlinkMessages.error(m);
                    if (err != 0) {
                        failure.record(index, -err, NetlinkMessages.extendedAck(m));
                    }
                } else if (onReply != null) {
                    int index = NetlinkMessages.sequence(m) - first;
                    if (index >= 0 && index < count) {
                        onReply.accept(m);
                    }
                }
            }

            ExchangeFailure failure() {
                return failure;
            }

            @Override
            public boolean done() {
                // A refused batch header: the kernel processed nothing after it, and no ACK comes.
                return pending <= 0 || failure.index == 0 && !acked.contains(0);
            }
        }

        /** One answer per lookup, its reply or an error; an errno other than {@code tolerated} is kept to throw. */
        final class Answers implements Replies {
            private final int first;
            private final BiConsumer<Integer, MemorySegment> onReply;
            private final int tolerated;
            private final int[] errnos;
            private final boolean[] answered;
            private final ExtendedAck[] acks;
            private int pending;

            Answers(int first, int count, BiConsumer<Integer, MemorySegment> onReply, int tolerated) {
                this.first = first;
                this.onReply = onReply;
                this.tolerated = tolerated;
                this.errnos = new int[count];
                this.answered = new boolean[count];
                this.acks = new ExtendedAck[count];
                this.pending = count;
            }

            @Override
            public void message(MemorySegment m) {
                boolean error = NetlinkMessages.type(m) == kernel_h.NLMSG_ERROR;
                int index = (error ? NetlinkMessages.errorSequence(m) : NetlinkMessages.sequence(m)) - first;
                if (index < 0 || index >= errnos.length || answered[index]) {
                    return; // a stale reply to something earlier, or a second message for one answered: nothing after it is
                }
                answered[index] = true;
                pending--;
                if (!error) {
                    onReply.accept(index, m);
                    return;
                }
                int err = -NetlinkMessages.error(m);
                if (err != 0 && err != tolerated) {
                    errnos[index] = -1 - err; // remembered, thrown once every answer is in
                    acks[index] = NetlinkMessages.extendedAck(m);
                } else {
                    errnos[index] = err;
                }
            }

            int[] errnos() {
                return errnos;
            }

            ExtendedAck[] acks() {
                return acks;
            }

            @Override
            public boolean done() {
                return pending <= 0;
            }
        }

        /** A dump's messages up to its DONE (or error), decoded; none once the kernel marked it interrupted. */
        final class Dumped<T> implements Replies {
            private final int sequence;
            private final Function<MemorySegment, T> decode;
            private final List<T> items = new ArrayList<>();
            private final ExchangeFailure failure = new ExchangeFailure();
            private boolean interrupted;
            private boolean done;

            Dumped(int sequence, Function<MemorySegment, T> decode) {
                this.sequence = sequence;
                this.decode = decode;
            }

            @Override
            public void message(MemorySegment m) {
                if (NetlinkMessages.sequence(m) != sequence || done) {
                    return;
                }
                if ((NetlinkMessages.flags(m) & kernel_h.NLM_F_DUMP_INTR) != 0) {
                    interrupted = true;
                }
                int type = NetlinkMessages.type(m);
                if (type == kernel_h.NLMSG_DONE) {
                    done = true;
                } else if (type == kernel_h.NLMSG_ERROR) {
                    int err = NetlinkMessages.error(m);
                    if (err != 0) {
                        failure.record(0, -err, NetlinkMessages.extendedAck(m));
                    }
                    done = true;
                } else if (!interrupted) {
                    T item = decode.apply(m);
                    if (item != null) {
                        items.add(item);
                    }
                }
            }

            ExchangeFailure failure() {
                return failure;
            }

            boolean interrupted() {
                return interrupted;
            }

            List<T> items() {
                return items;
            }

            @Override
            public boolean done() {
                return done;
            }
        }
}
