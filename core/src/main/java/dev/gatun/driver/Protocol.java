package dev.gatun.driver;

import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.internal.Constants;

import java.util.Locale;

/** Transport protocols a port can be published for. */
public enum Protocol {
    TCP(libc_h.IPPROTO_TCP), UDP(libc_h.IPPROTO_UDP), SCTP(libc_h.IPPROTO_SCTP);

    private final int number;

    Protocol(int number) {
        this.number = number;
    }

    public int number() {
        return number;
    }

    public String keyword() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The protocol of an IP protocol number; throws for one gatun does not publish. */
    public static Protocol ofNumber(int number) {
        return Constants.first(values(), p -> p.number() == number)
                .orElseThrow(() -> new IllegalArgumentException("IP protocol " + number + " is not tcp, udp or sctp"));
    }

    public static Protocol parse(String text) {
        return Constants.first(values(), p -> p.keyword().equals(text))
                .orElseThrow(() -> new InvalidInputException("unknown protocol '" + text + "' (expected tcp, udp or sctp)"));
    }
}
