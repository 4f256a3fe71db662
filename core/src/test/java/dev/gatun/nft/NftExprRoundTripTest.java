package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Dynset;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Fib;
import dev.gatun.nft.expr.Immediate;
import dev.gatun.nft.expr.Log;
import dev.gatun.nft.expr.Lookup;
import dev.gatun.nft.expr.Masquerade;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.MetaSet;
import dev.gatun.nft.expr.Nat;
import dev.gatun.nft.expr.NatFlag;
import dev.gatun.nft.expr.Payload;
import dev.gatun.nft.expr.Range;
import dev.gatun.nft.expr.Redirect;
import dev.gatun.nft.expr.Registers;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.reflect.Modifier;
import java.util.LinkedHashSet;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every kind of expression, written into a rule message by gatun through libnftnl and parsed
 * back by libnftnl, comes back equal. No kernel and no privilege needed: libnftnl builds and
 * parses messages in memory, no socket is opened. Decoding switches on kind names, so without
 * a case here a new expression record could encode and never decode.
 */
class NftExprRoundTripTest {

    private static final Chain CHAIN = Chain.regular(Table.of(Family.INET, "gatun"), "c");

    /** At least one of each permitted subclass of Expr; everyPermittedSubclassHasASample keeps it so. */
    static List<Expr> samples() {
        return List.of(
                new Payload(Payload.Base.NETWORK, 12, 4, Registers.REG1),
                new Meta(Meta.Key.OIFNAME, Registers.REG1),
                new MetaSet(Meta.Key.MARK, Registers.REG1),
                new Cmp(Registers.REG1, CmpOp.NEQ, Bytes.of((byte) 10, (byte) 0, (byte) 0, (byte) 1)),
                new Bitwise(Registers.REG1, Registers.REG2, Bytes.of((byte) 0xff, (byte) 0, (byte) 0, (byte) 0),
                        Bytes.of((byte) 0, (byte) 0, (byte) 0, (byte) 1)),
                new Bitwise(Registers.REG1, Registers.REG1, Bytes.of((byte) 0, (byte) 0x20, (byte) 0, (byte) 0),
                        Bytes.zeros(4), true),
                new Range(Registers.REG1, CmpOp.NEQ, Bytes.of((byte) 0, (byte) 80), Bytes.of((byte) 0, (byte) 90)),
                new Lookup(Registers.REG1, "ports4", Registers.REG1, false),
                new Lookup(Registers.REG1, "blocked", null, true),
                new Immediate(Registers.REG2, Bytes.of((byte) 10, (byte) 88, (byte) 0, (byte) 2)),
                new VerdictExpr(Verdict.jump("other")),
                new VerdictExpr(Verdict.DROP),
                new Nat(Nat.Type.DNAT, Family.IP, Registers.REG1, 0, Registers.REG2, 0,
                        Set.of(NatFlag.PROTO_SPECIFIED)),
                new Masquerade(Set.of(NatFlag.PROTO_RANDOM_FULLY), 0, 0),
                new Masquerade(Set.of(NatFlag.PROTO_RANDOM, NatFlag.PERSISTENT), Registers.REG1, 0),
                new Redirect(Registers.REG1, 0, Set.of(NatFlag.PROTO_SPECIFIED)),
                new Reject(kernel_h.NFT_REJECT_ICMPX_UNREACH, kernel_h.NFT_REJECT_ICMPX_ADMIN_PROHIBITED),
                new Counter(3, 180),
                new Ct(Ct.Key.MARK, 1, Registers.REG1),
                new Fib(kernel_h.NFTA_FIB_F_DADDR, kernel_h.NFT_FIB_RESULT_ADDRTYPE, Registers.REG1),
                new Log("gatun: ", 4, null),
                new Log(null, null, 2),
                new Dynset(Dynset.Op.UPDATE, Registers.REG1, "heard", null),
                new Dynset(Dynset.Op.ADD, Registers.REG1, "seen", Duration.ofSeconds(90)),
                NftOpaqueTest.CONNTRACK);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void readsBackWhatItWrote(Expr sample) {
        Rule rule = Rule.in(CHAIN).raw(sample).build();

        assertThat(RuleMessages.readBack(rule).expressions()).containsExactly(sample);
    }

    @Test
    void everyPermittedSubclassHasASample() {
        List<Expr> samples = samples();
        List<String> withoutSample = permittedSubclasses(Expr.class).stream()
                .filter(kind -> samples.stream().noneMatch(kind::isInstance))
                .map(Class::getName)
                .sorted()
                .toList();

        assertThat(withoutSample).as("permitted subclasses of Expr without a round-trip case in samples()").isEmpty();
    }

    @Test
    void theEnumerationFollowsSealedSubtypesDown() {
        assertThat(permittedSubclasses(Shape.class)).containsExactlyInAnyOrder(Circle.class, Square.class, Solid.class);
    }

    private sealed interface Shape permits Circle, Polygon, Solid {}

    private sealed interface Polygon extends Shape permits Square {}

    private record Circle() implements Shape {}

    private record Square() implements Polygon {}

    private non-sealed interface Solid extends Shape {}

    /**
     * The classes an instance of {@code sealed} can have: its permitted subclasses, and theirs
     * where they are sealed in turn. A non-sealed one counts as itself.
     */
    private static Set<Class<?>> permittedSubclasses(Class<?> sealed) {
        Set<Class<?>> out = new LinkedHashSet<>();
        for (Class<?> c : sealed.getPermittedSubclasses()) {
            if (c.isSealed()) {
                out.addAll(permittedSubclasses(c));
                if (!c.isInterface() && !Modifier.isAbstract(c.getModifiers())) {
                    out.add(c);
                }
            } else {
                out.add(c);
            }
        }
        return out;
    }
}
