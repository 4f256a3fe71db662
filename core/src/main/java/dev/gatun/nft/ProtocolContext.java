package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Family;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.Registers;

import java.util.List;

/**
 * What a rule has established so far about the packet's protocols, and the protocol checks nft
 * puts in front of a field that needs one ({@code meta l4proto tcp} before {@code tcp dport}),
 * each only once and not where the table's family or an earlier match already settles it.
 */
final class ProtocolContext {

    private final Family family;
    private final List<Expr> exprs;
    /** The network protocol the rule has already matched (IPV4, IPV6) or null. */
    private Field.Dependency networkKnown;
    /** The transport protocol number the rule has already matched, or -1. */
    private int transportKnown = -1;
    private boolean etherKnown;

    /** Checks go to the end of {@code exprs}, the rule being built. */
    ProtocolContext(Family family, List<Expr> exprs) {
        this.family = family;
        this.exprs = exprs;
        if (family == Family.IP) {
            networkKnown = Field.Dependency.IPV4;
        } else if (family == Family.IP6) {
            networkKnown = Field.Dependency.IPV6;
        }
        etherKnown = family == Family.BRIDGE;
    }

    /** Adds the check {@code field} depends on, unless it is known already. */
    void addDependency(Field field) {
        switch (field.dependency) {
            case IPV4, IPV6 -> {
                if (networkKnown != field.dependency) {
                    if (!family.mixesNetworkProtocols()) {
                        throw new InvalidInputException(field.words + " cannot match in a table of family " + family);
                    }
                    exprs.add(new Meta(Meta.Key.NFPROTO, Registers.REG1));
                    int proto = field.dependency == Field.Dependency.IPV4 ? kernel_h.NFPROTO_IPV4 : kernel_h.NFPROTO_IPV6;
                    exprs.add(new Cmp(Registers.REG1, CmpOp.EQ, Bytes.of((byte) proto)));
                    networkKnown = field.dependency;
                }
            }
            case TCP, UDP, SCTP -> {
                int proto = switch (field.dependency) {
                    case TCP -> libc_h.IPPROTO_TCP;
                    case UDP -> libc_h.IPPROTO_UDP;
                    default -> libc_h.IPPROTO_SCTP;
                };
                if (transportKnown != proto) {
                    exprs.add(new Meta(Meta.Key.L4PROTO, Registers.REG1));
                    exprs.add(new Cmp(Registers.REG1, CmpOp.EQ, Bytes.of((byte) proto)));
                    transportKnown = proto;
                }
            }
            case ETHER -> {
                if (!etherKnown) {
                    exprs.add(new Meta(Meta.Key.IIFTYPE, Registers.REG1));
                    exprs.add(new Cmp(Registers.REG1, CmpOp.EQ, HostOrder.int16(NftKeywords.INTERFACE_TYPES.value("ether"))));
                    etherKnown = true;
                }
            }
            case NONE -> { }
        }
    }

    /** An explicit protocol match satisfies later dependencies, as it does for nft. */
    void note(Field field, CmpOp op, Bytes data) {
        if (op != CmpOp.EQ) {
            return;
        }
        if (field == Field.META_L4PROTO || field == Field.IP_PROTOCOL || field == Field.IP6_NEXTHDR) {
            transportKnown = data.get(0);
        } else if (field == Field.META_NFPROTO) {
            networkKnown = data.get(0) == kernel_h.NFPROTO_IPV4 ? Field.Dependency.IPV4 : Field.Dependency.IPV6;
        }
    }

    /** Whether the rule has matched this transport protocol (an IPPROTO_* number). */
    boolean transportIs(int protocol) {
        return transportKnown == protocol;
    }

    /** Refuses {@code what} (a NAT to a port) unless a transport protocol was matched before it. */
    void requireTransport(String what) {
        if (transportKnown < 0) {
            throw new InvalidInputException(what + " needs a transport protocol match (tcp, udp or sctp) before it");
        }
    }
}
