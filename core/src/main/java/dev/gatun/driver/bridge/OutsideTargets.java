package dev.gatun.driver.bridge;

import dev.gatun.InetText;
import dev.gatun.nft.Element;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/** {@link OutsideTarget}s as elements of gatun's table: {@code outside4} and {@code outside6} (see {@link GatunRuleset}). */
final class OutsideTargets {

    /** The comment of an element for whose interface gatun turned route_localnet on. */
    static final String LOCALNET = "route_localnet set by gatun";

    private OutsideTargets() {}

    static NftSet set(OutsideTarget t) {
        return t.isIpv6() ? GatunRuleset.OUTSIDE6 : GatunRuleset.OUTSIDE4;
    }

    static Element element(OutsideTarget t) {
        Element e = Element.of(t.hostIfname(), InetText.of(t.containerIp()));
        return t.localnetByGatun() ? e.withComment(LOCALNET) : e;
    }

    /** The targets in the table as read ({@code now}, without elements); none while its sets are not there. */
    static List<OutsideTarget> read(Nftables nft, Ruleset now) {
        List<OutsideTarget> out = new ArrayList<>();
        for (NftSet set : List.of(GatunRuleset.OUTSIDE4, GatunRuleset.OUTSIDE6)) {
            if (now.setsOf(GatunRuleset.TABLE).stream().noneMatch(s -> s.name().equals(set.name())
                    && s.keyType().equals(set.keyType()))) {
                continue;
            }
            for (Element e : nft.elements(set)) {
                out.add(target(e));
            }
        }
        return out;
    }

    /** The target an element stands for; nft keeps no route, so it is the container's own address. */
    static OutsideTarget target(Element e) {
        InetAddress ip = Prefix.address(e.key().get(1));
        return new OutsideTarget(e.key().get(0), ip, new Prefix(ip, ip.getAddress().length * 8),
                LOCALNET.equals(e.comment()));
    }
}
