package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A change to the ruleset that the kernel announced: what happened to which object, and which
 * thread committed it (0 when not known). For elements, {@code name} is the set. A
 * NEW_GENERATION ends each transaction and carries the generation id it made (a u32, so it may
 * look negative; 0 in other events). OVERRUN means notifications were lost: read the ruleset again.
 */
public record RulesetEvent(Kind kind, Family family, String table, String name, int committer, int generation) {

    /** An event whose committer is not known (an overrun, a change read on its own). */
    public RulesetEvent(Kind kind, Family family, String table, String name) {
        this(kind, family, table, name, 0, 0);
    }

    /** The end of a transaction: the generation it made, by thread {@code committer}. */
    static RulesetEvent newGeneration(int generation, int committer) {
        return new RulesetEvent(Kind.NEW_GENERATION, null, null, null, committer, generation);
    }

    /** The same event, committed by thread {@code committer} (as the kernel names it: a thread id). */
    RulesetEvent by(int committer) {
        return new RulesetEvent(kind, family, table, name, committer, generation);
    }

    /**
     * Whether a thread of this process made the change. The kernel names the committing thread
     * in the transaction's NEWGEN notification; a thread of ours is one under /proc/self/task,
     * so a thread that has ended by the time the event is read is not recognised.
     */
    public boolean byThisProcess() {
        return committer > 0 && Files.exists(Path.of("/proc/self/task/" + committer));
    }

    /**
     * The process that committed it, as "pid PID (COMM)" from /proc while it lives, "a process
     * that has exited (thread TID)" once it is gone (an nft command exits before its notification
     * is read), or "not known".
     */
    public String committerName() {
        if (committer <= 0) {
            return "not known";
        }
        try {
            String tgid = null;
            String comm = Files.readString(Path.of("/proc/" + committer + "/comm")).strip();
            for (String line : Files.readAllLines(Path.of("/proc/" + committer + "/status"))) {
                if (line.startsWith("Tgid:")) {
                    tgid = line.substring(5).strip();
                    break;
                }
            }
            return "pid " + (tgid == null ? committer : tgid) + " (" + comm + ")";
        } catch (java.io.IOException | RuntimeException e) {
            return "a process that has exited (thread " + committer + ")";
        }
    }

    public enum Kind {
        NEW_TABLE, DELETE_TABLE, NEW_CHAIN, DELETE_CHAIN, NEW_RULE, DELETE_RULE, NEW_SET, DELETE_SET,
        NEW_ELEMENTS, DELETE_ELEMENTS, NEW_GENERATION, OVERRUN
    }

    /** Whether this event removed something. */
    public boolean isRemoval() {
        return switch (kind) {
            case DELETE_TABLE, DELETE_CHAIN, DELETE_RULE, DELETE_SET, DELETE_ELEMENTS -> true;
            default -> false;
        };
    }
}
