package dev.gatun.nft;

import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Family;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/** An nftables table: the container of chains and sets, in one family. */
public record Table(Family family, String name, Set<TableFlag> flags, String comment, long handle) {

    public Table {
        Objects.requireNonNull(family, "family");
        NftNames.check("table", name);
        flags = flags.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(flags));
        NftNames.checkComment("table " + family + " " + name, comment);
    }

    public static Table of(Family family, String name) {
        return new Table(family, name, Set.of(), null, 0);
    }

    public Table withComment(String comment) {
        return new Table(family, name, flags, comment, handle);
    }

    public Table withFlags(TableFlag... flags) {
        return new Table(family, name, Set.of(flags), comment, handle);
    }

    /** The same table as the kernel knows it, for comparisons that ignore handles. */
    public Table withoutHandle() {
        return new Table(family, name, flags, comment, 0);
    }

    /** "table ip gatun": how errors name it. */
    public String describe() {
        return "table " + family + " " + name;
    }
}
