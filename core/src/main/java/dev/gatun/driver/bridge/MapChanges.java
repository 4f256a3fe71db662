package dev.gatun.driver.bridge;

import dev.gatun.nft.NftSet;
import dev.gatun.nft.RulesetEvent;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Which transactions changed gatun's four maps, as the kernel's nftables notifications tell it:
 * fed every notification in order by the thread that reads them, asked by the committer
 * ({@link FollowedMappingStore}), which then knows whether what it holds in memory is still
 * what the kernel holds. A transaction's notifications come before the NEWGEN that ends it and
 * names the generation it made. It never decides anything: it only remembers.
 */
final class MapChanges implements Consumer<RulesetEvent> {

    /** Remembered changing generations beyond this many, unasked: forgotten, and taken as lost. */
    private static final int MAX_REMEMBERED = 4096;

    /** What the committer learns when it asks. */
    record Since(boolean lost, boolean heardAny, int lastHeard, List<Integer> changing) {}

    /** Whether the transaction being heard changed a map so far (the reading thread only). */
    private boolean changingNow;

    // Guarded by this.
    private boolean lost;
    private boolean heardAny;
    private int lastHeard;
    /** Generations whose transactions changed a map, in the order heard, not yet past what the committer holds. */
    private final List<Integer> changing = new ArrayList<>();

    @Override
    public void accept(RulesetEvent e) {
        switch (e.kind()) {
            case OVERRUN -> {
                changingNow = false;
                synchronized (this) {
                    lost = true;
                    changing.clear();
                }
            }
            case NEW_GENERATION -> {
                boolean changed = changingNow;
                changingNow = false;
                heard(e.generation(), changed);
            }
            default -> changingNow |= changesAMap(e);
        }
    }

    private synchronized void heard(int generation, boolean changed) {
        heardAny = true;
        lastHeard = generation;
        if (!changed) {
            return;
        }
        if (changing.size() == MAX_REMEMBERED) {
            lost = true;
            changing.clear();
            return;
        }
        changing.add(generation);
    }

    /** Whether {@code e} may have changed what one of the four maps holds: any change to their table, elements or sets. */
    static boolean changesAMap(RulesetEvent e) {
        if (!GatunRuleset.TABLE.name().equals(e.table())) {
            return false;
        }
        return switch (e.kind()) {
            case NEW_TABLE, DELETE_TABLE -> true;
            case NEW_SET, DELETE_SET, NEW_ELEMENTS, DELETE_ELEMENTS -> isMap(e.name());
            default -> false;
        };
    }

    private static boolean isMap(String set) {
        for (NftSet map : MappingElements.MAPS) {
            if (map.name().equals(set)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the NEWGEN of generation {@code g} (or a later one) was heard, for tests that wait for the reader. */
    synchronized boolean heard(int g) {
        return heardAny && !Generations.after(g, lastHeard);
    }

    /**
     * What was heard after generation {@code held} (what the committer holds): whether
     * notifications were lost, the last generation heard, and the changing generations after
     * {@code held} up to it. Forgets what it hands over, and the loss: the caller reads afresh.
     */
    synchronized Since since(int held) {
        List<Integer> after = new ArrayList<>();
        for (int g : changing) {
            if (Generations.after(g, held)) {
                after.add(g);
            }
        }
        changing.clear();
        Since s = new Since(lost, heardAny, lastHeard, after);
        lost = false;
        return s;
    }
}
