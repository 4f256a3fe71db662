package dev.gatun.testing;

import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.rtnl.Prefix;

import java.util.Arrays;
import java.util.List;

/** The specs most driver tests start from, written once. */
public final class Specs {

    /** The subnet of {@link #n1()}. */
    public static final String SUBNET = "10.88.0.0/16";

    private Specs() {}

    /** Port specs in Docker's {@code -p} words: {@code ports("8080:80", "53/udp")}. */
    public static List<PortSpec> ports(String... specs) {
        return Arrays.stream(specs).map(PortSpec::parse).toList();
    }

    /** Network n1 on {@link #SUBNET}, every other option its default. */
    public static NetworkSpec n1() {
        return NetworkSpec.of("n1", Prefix.parse(SUBNET));
    }

    /** The driver, with network {@link #n1()} made; closed again when making it fails. */
    public static <D extends GatunDriver> D withNetwork(D driver) {
        try {
            driver.createNetwork(n1());
            return driver;
        } catch (RuntimeException | Error e) {
            driver.close();
            throw e;
        }
    }
}
