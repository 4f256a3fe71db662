package dev.gatun.nft;

import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.InvalidInputException;

import java.util.Objects;

/**
 * A chain: a base chain when {@code base} is set (attached to a hook), else a regular chain
 * reached by jump or goto.
 */
public record Chain(Family family, String table, String name, Base base, String comment, long handle) {

    /** What makes a chain a base chain. {@code device} is for the netdev family only. */
    public record Base(ChainType type, Hook hook, int priority, Verdict.Code policy, String device) {
        public Base {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(hook, "hook");
            if (policy != null && policy != Verdict.Code.ACCEPT && policy != Verdict.Code.DROP) {
                throw new InvalidInputException("chain policy must be accept or drop, not " + policy);
            }
        }
    }

    public Chain {
        Objects.requireNonNull(family, "family");
        NftNames.check("table", table);
        NftNames.check("chain", name);
        NftNames.checkComment("chain " + family + " " + table + " " + name, comment);
        if (base != null && base.device() != null) {
            NftNames.check("device", base.device());
        }
        if (base != null && family == Family.NETDEV && base.device() == null) {
            throw new InvalidInputException("netdev base chain " + name + " needs a device");
        }
    }

    public static Chain regular(Table table, String name) {
        return new Chain(table.family(), table.name(), name, null, null, 0);
    }

    public static Chain base(Table table, String name, ChainType type, Hook hook, int priority, Verdict.Code policy) {
        return new Chain(table.family(), table.name(), name, new Base(type, hook, priority, policy, null), null, 0);
    }

    public Chain withComment(String comment) {
        return new Chain(family, table, name, base, comment, handle);
    }

    public Chain withDevice(String device) {
        if (base == null) {
            throw new InvalidInputException("only a base chain has a device: " + describe());
        }
        return new Chain(family, table, name, new Base(base.type(), base.hook(), base.priority(), base.policy(), device),
                comment, handle);
    }

    public Chain withoutHandle() {
        return new Chain(family, table, name, base, comment, 0);
    }

    public boolean isBase() {
        return base != null;
    }

    public String describe() {
        return "chain " + family + " " + table + " " + name;
    }
}
