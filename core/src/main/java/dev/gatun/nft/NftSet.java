package dev.gatun.nft;

import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Family;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A named set or map. The key may be a concatenation ({@code ipv4_addr . inet_proto .
 * inet_service}); so may a map's data. A verdict map has the data type {@link DataType#VERDICT}.
 */
public record NftSet(Family family, String table, String name, List<DataType> keyType, List<DataType> dataType,
                     Set<SetFlag> flags, Duration timeout, String comment, long handle) {

    public NftSet {
        Objects.requireNonNull(family, "family");
        NftNames.check("table", table);
        NftNames.check("set", name);
        keyType = List.copyOf(keyType);
        dataType = List.copyOf(dataType);
        flags = flags.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(flags));
        String what = "set " + family + " " + table + " " + name;
        if (keyType.isEmpty()) {
            throw new InvalidInputException(what + " needs a key type");
        }
        if (keyType.contains(DataType.VERDICT)) {
            throw new InvalidInputException(what + ": a verdict cannot be part of a key");
        }
        if (dataType.contains(DataType.VERDICT) && dataType.size() > 1) {
            throw new InvalidInputException(what + ": a verdict cannot be concatenated");
        }
        if (flags.contains(SetFlag.INTERVAL) && keyType.size() > 1) {
            throw new InvalidInputException(what + ": interval sets with concatenated keys are not supported");
        }
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new InvalidInputException(what + ": timeout must be positive");
        }
        NftNames.checkComment(what, comment);
    }

    /** A set with this key (several types make a concatenation). */
    public static NftSet of(Table table, String name, DataType... key) {
        return new NftSet(table.family(), table.name(), name, List.of(key), List.of(), Set.of(), null, null, 0);
    }

    /** A map from {@code key} to {@code data}. */
    public static NftSet map(Table table, String name, List<DataType> key, List<DataType> data) {
        if (data.isEmpty()) {
            throw new InvalidInputException("map " + name + " needs a data type");
        }
        return new NftSet(table.family(), table.name(), name, key, data, Set.of(), null, null, 0);
    }

    public NftSet withFlags(SetFlag... flags) {
        return new NftSet(family, table, name, keyType, dataType, Set.of(flags), timeout, comment, handle);
    }

    public NftSet withTimeout(Duration timeout) {
        return new NftSet(family, table, name, keyType, dataType, flags, timeout, comment, handle);
    }

    public NftSet withComment(String comment) {
        return new NftSet(family, table, name, keyType, dataType, flags, timeout, comment, handle);
    }

    public NftSet withoutHandle() {
        return new NftSet(family, table, name, keyType, dataType, flags, timeout, comment, 0);
    }

    public boolean isMap() {
        return !dataType.isEmpty();
    }

    public boolean isVerdictMap() {
        return dataType.equals(List.of(DataType.VERDICT));
    }

    /** Key bytes as the kernel stores them: concatenated values each padded to 32 bits. */
    public int keyLength() {
        return length(keyType);
    }

    public int dataLength() {
        return isVerdictMap() ? 0 : length(dataType);
    }

    static int length(List<DataType> types) {
        if (types.size() == 1) {
            return types.getFirst().length;
        }
        int n = 0;
        for (DataType t : types) {
            n += padded(t.length);
        }
        return n;
    }

    static int padded(int length) {
        return (length + kernel_h.NFT_REG32_SIZE - 1) / kernel_h.NFT_REG32_SIZE * kernel_h.NFT_REG32_SIZE;
    }

    /** "set ip gatun ports4" / "map ip gatun ports4". */
    public String describe() {
        return (isMap() ? "map " : "set ") + family + " " + table + " " + name;
    }
}
