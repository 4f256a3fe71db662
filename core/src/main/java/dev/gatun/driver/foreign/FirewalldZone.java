package dev.gatun.driver.foreign;

import dev.gatun.GatunException;
import org.freedesktop.dbus.annotations.DBusInterfaceName;
import org.freedesktop.dbus.connections.impl.DBusConnection;
import org.freedesktop.dbus.connections.impl.DBusConnectionBuilder;
import org.freedesktop.dbus.exceptions.DBusException;
import org.freedesktop.dbus.exceptions.DBusExecutionException;
import org.freedesktop.dbus.interfaces.DBusInterface;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * firewalld's {@code trusted} zone, through firewalld's own D-Bus API on the system bus (the one
 * {@code firewall-cmd} calls, without a Python process per call): gatun's bridges are put in it
 * at run time, never in the permanent configuration, as Podman does. A reload forgets them and
 * re-creates firewalld's table, and a repair puts them back. One connection per operation:
 * they are rare (a network made or removed, a reload), and no connection outlives firewalld.
 */
final class FirewalldZone {

    static final String ZONE = "trusted";
    private static final String BUS_NAME = "org.fedoraproject.FirewallD1";
    private static final String OBJECT = "/org/fedoraproject/FirewallD1";
    private static final String UNKNOWN_INTERFACE = "UNKNOWN_INTERFACE";

    /** The zone methods of firewalld's D-Bus API (firewalld.dbus(5): org.fedoraproject.FirewallD1.zone). */
    @DBusInterfaceName("org.fedoraproject.FirewallD1.zone")
    public interface Zones extends DBusInterface {
        List<String> getInterfaces(String zone);

        /** At run time: until firewalld reloads or stops. Returns the zone. */
        String addInterface(String zone, String iface);

        String removeInterface(String zone, String iface);
    }

    /** What one operation does with the zones; throws what D-Bus throws. */
    private interface Call<T> {
        T on(Zones zones) throws DBusException;
    }

    private final String busAddress;

    /** {@code busAddress}: the system bus, as DBUS_SYSTEM_BUS_ADDRESS names it ("unix:path=/run/dbus/system_bus_socket"). */
    FirewalldZone(String busAddress) {
        this.busAddress = busAddress;
    }

    /** The bus address gatun uses: {@code -Dgatun.dbusSystemBusAddress}, else DBUS_SYSTEM_BUS_ADDRESS, else the standard socket. */
    static String systemBus() {
        String given = System.getProperty("gatun.dbusSystemBusAddress");
        if (given == null || given.isEmpty()) {
            given = System.getenv("DBUS_SYSTEM_BUS_ADDRESS");
        }
        return given == null || given.isEmpty() ? "unix:path=/run/dbus/system_bus_socket" : given;
    }

    String busAddress() {
        return busAddress;
    }

    /** The bridges not in the zone now: one call, whatever their number. */
    List<String> missing(List<String> bridges) {
        List<String> in = call("list the interfaces of firewalld's zone " + ZONE, z -> z.getInterfaces(ZONE));
        return bridges.stream().filter(b -> !in.contains(b)).toList();
    }

    /** Puts the missing bridges in the zone; returns what it changed. */
    Optional<String> add(List<String> bridges) {
        List<String> missing = missing(bridges);
        if (missing.isEmpty()) {
            return Optional.empty();
        }
        call("put bridge(s) " + String.join(", ", missing) + " in firewalld's zone " + ZONE, z -> {
            for (String b : missing) {
                z.addInterface(ZONE, b);
            }
            return null;
        });
        return Optional.of("bridge(s) " + String.join(", ", missing) + " in firewalld's zone " + ZONE);
    }

    /** Takes a bridge out of the zone; one that is not there is no error. */
    void remove(String bridge) {
        try {
            call("take bridge " + bridge + " out of firewalld's zone " + ZONE, z -> z.removeInterface(ZONE, bridge));
        } catch (GatunException e) {
            if (!e.getMessage().contains(UNKNOWN_INTERFACE)) {
                throw e;
            }
        }
    }

    private <T> T call(String operation, Call<T> call) {
        try (DBusConnection bus = DBusConnectionBuilder.forAddress(busAddress).withShared(false).build()) {
            return call.on(bus.getRemoteObject(BUS_NAME, OBJECT, Zones.class));
        } catch (DBusException | DBusExecutionException e) {
            throw new GatunException("could not " + operation + " over D-Bus (" + busAddress + "): " + e.getMessage());
        } catch (IOException e) {
            throw new GatunException("could not " + operation + ": closing the D-Bus connection to " + busAddress
                    + " failed: " + e.getMessage());
        }
    }
}
