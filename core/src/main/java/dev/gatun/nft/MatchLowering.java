package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.InvalidInputException;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.Payload;
import dev.gatun.nft.expr.Range;
import dev.gatun.nft.expr.Registers;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Lowers a match written in nft's words into the loads and comparisons nft emits for it: an
 * equality, an address prefix, a range, an interface wildcard, or the concatenated key of a
 * lookup, each after the protocol checks its fields depend on.
 */
final class MatchLowering {

    private final List<Expr> exprs;
    private final ProtocolContext context;

    /** Expressions go to the end of {@code exprs}, the rule being built. */
    MatchLowering(List<Expr> exprs, ProtocolContext context) {
        this.exprs = exprs;
        this.context = context;
    }

    /** {@code FIELD [op] VALUE}: equality, a prefix ("10.0.0.0/8"), a range ("8000-8010") or an interface wildcard ("br-*"). */
    void compare(Field field, CmpOp op, String value) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException(field.words + ": the value to match must not be empty");
        }
        context.addDependency(field);
        if (field.type == DataType.IFNAME && value.endsWith("*")) {
            load(field, Registers.REG1);
            byte[] prefix = value.substring(0, value.length() - 1).getBytes(StandardCharsets.UTF_8);
            DataType.IFNAME.encode(value.substring(0, Math.max(1, value.length() - 1))); // validates the length
            exprs.add(new Cmp(Registers.REG1, op, Bytes.wrap(prefix)));
            return;
        }
        int slash = value.indexOf('/');
        if (slash > 0 && (field.type == DataType.IPV4_ADDR || field.type == DataType.IPV6_ADDR)) {
            comparePrefix(field, op, value.substring(0, slash), value.substring(slash + 1));
            return;
        }
        int dash = rangeDash(field, value);
        if (dash > 0) {
            compareRange(field, op, value, dash);
            return;
        }
        Bytes data = encode(field, value);
        load(field, Registers.REG1);
        exprs.add(new Cmp(Registers.REG1, op, data));
        context.note(field, op, data);
    }

    /** Loads the fields one after another from register 1, each padded to 32 bits, as a set's concatenated key. */
    void loadConcatenation(Field... key) {
        if (key.length == 0) {
            throw new InvalidInputException("a lookup needs at least one field");
        }
        for (Field f : key) {
            context.addDependency(f);
        }
        int words = 0;
        for (Field f : key) {
            load(f, Registers.after(words));
            words += NftSet.padded(f.length()) / Registers.BYTES_32;
        }
    }

    private void comparePrefix(Field field, CmpOp op, String address, String prefixText) {
        Bytes addr = field.type.encode(address);
        int bits = addr.length() * 8;
        int prefix = (int) DataType.parseNumber(prefixText, 0, bits, "prefix length");
        byte[] mask = new byte[addr.length()];
        for (int i = 0; i < prefix; i++) {
            mask[i / 8] |= (byte) (0x80 >>> (i % 8));
        }
        byte[] network = addr.toArray();
        for (int i = 0; i < network.length; i++) {
            network[i] &= mask[i];
        }
        if (prefix == bits) {
            load(field, Registers.REG1);
            exprs.add(new Cmp(Registers.REG1, op, Bytes.wrap(network)));
        } else if (prefix > 0 && prefix % 8 == 0) {
            // nft loads only the prefix's bytes and compares those.
            int n = prefix / 8;
            exprs.add(new Payload(field.base, field.offset, n, Registers.REG1));
            exprs.add(new Cmp(Registers.REG1, op, Bytes.wrap(Arrays.copyOf(network, n))));
        } else {
            load(field, Registers.REG1);
            exprs.add(new Bitwise(Registers.REG1, Registers.REG1, Bytes.wrap(mask), Bytes.zeros(mask.length)));
            exprs.add(new Cmp(Registers.REG1, op, Bytes.wrap(network)));
        }
    }

    /** nft writes an inclusive range as two comparisons, and its negation as one range expression. */
    private void compareRange(Field field, CmpOp op, String value, int dash) {
        Bytes from = encode(field, value.substring(0, dash));
        Bytes to = encode(field, value.substring(dash + 1));
        if (Arrays.compareUnsigned(from.raw(), to.raw()) > 0) {
            throw new InvalidInputException(field.words + " range " + value + " is reversed");
        }
        load(field, Registers.REG1);
        if (op == CmpOp.EQ) {
            exprs.add(new Cmp(Registers.REG1, CmpOp.GTE, from));
            exprs.add(new Cmp(Registers.REG1, CmpOp.LTE, to));
        } else {
            exprs.add(new Range(Registers.REG1, CmpOp.NEQ, from, to));
        }
    }

    /** Where the dash of a range is, or -1 for a type whose values may contain one (or no range at all). */
    private static int rangeDash(Field field, String value) {
        if (field.type == DataType.IPV6_ADDR || field.type == DataType.IFNAME || field.type == null) {
            return -1;
        }
        return value.indexOf('-', 1);
    }

    private void load(Field field, int dreg) {
        if (field.isPayload()) {
            exprs.add(new Payload(field.base, field.offset, field.length(), dreg));
        } else if (field.meta != null) {
            exprs.add(new Meta(field.meta, dreg));
        } else {
            exprs.add(new Ct(field.ct, field.ctDirection, dreg));
        }
    }

    private static Bytes encode(Field field, String value) {
        return switch (field) {
            case META_NFPROTO -> Bytes.of((byte) NftKeywords.NETWORK_PROTOCOLS.value(value));
            case CT_DIRECTION -> Bytes.of((byte) NftKeywords.CT_DIRECTIONS.value(value));
            case META_IIF, META_OIF -> HostOrder.int32((int) DataType.parseNumber(value, 1, Integer.MAX_VALUE, "interface index"));
            default -> field.type.encode(value);
        };
    }
}
