package dev.gatun;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Undo steps for an operation made of several non-transactional steps (rtnetlink has no
 * transactions). Register an undo after each step succeeds; on failure {@link #undo} runs
 * them newest first, keeping the original failure and recording undo failures as suppressed.
 */
public final class Rollback {

    private final Deque<Runnable> steps = new ArrayDeque<>();

    public void onFailure(Runnable undo) {
        steps.push(undo);
    }

    /** Undoes every completed step; returns {@code failure} with any undo errors attached. */
    public <T extends Throwable> T undo(T failure) {
        while (!steps.isEmpty()) {
            try {
                steps.pop().run();
            } catch (RuntimeException e) {
                failure.addSuppressed(e);
            }
        }
        return failure;
    }
}
