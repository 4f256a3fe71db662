package dev.gatun.cli.metrics;

import dev.gatun.InvalidInputException;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Where --metrics listens: PORT (on 127.0.0.1), ADDRESS:PORT or [IPV6]:PORT, the address a literal, never a name to look up. */
public final class MetricsAddress {

    private MetricsAddress() {
    }

    public static InetSocketAddress parse(String text) {
        String host = "127.0.0.1";
        String port = text;
        int colon = text.lastIndexOf(':');
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                throw bad(text);
            }
            host = text.substring(1, close);
            port = text.substring(close + 2);
        } else if (colon >= 0) {
            if (text.indexOf(':') != colon) {
                throw bad(text); // an IPv6 address without brackets
            }
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
        }
        if (!port.matches("\\d{1,5}") || Integer.parseInt(port) > 65535) {
            throw new InvalidInputException("--metrics " + text + ": the port " + port + " is not a number from 0 to 65535");
        }
        if (!host.matches("[0-9.]+|[0-9A-Fa-f:.]+") || !host.contains(".") && !host.contains(":")) {
            throw new InvalidInputException("--metrics " + text + ": " + host + " is not an IP address (names are not "
                    + "looked up: give 127.0.0.1, ::1 or the address to listen on)");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), Integer.parseInt(port));
        } catch (UnknownHostException e) {
            throw new InvalidInputException("--metrics " + text + ": " + host + " is not an IP address");
        }
    }

    private static InvalidInputException bad(String text) {
        return new InvalidInputException("--metrics " + text + " is not [ADDRESS:]PORT (an IPv6 address in brackets: "
                + "[::1]:9464)");
    }
}
