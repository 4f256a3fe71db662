package dev.gatun.cli.events;

import dev.gatun.InvalidInputException;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The times {@code --since} and {@code --until} take, as docker events takes them: a time ago, an instant, or seconds since the epoch. */
public final class EventTimes {

    private static final Pattern AGO = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

    private EventTimes() {
    }

    /** {@code text} ("10m", "90s", "2026-12-02T21:00:00Z", "1764709200", "now") as an instant, relative to {@code now}. */
    public static Instant parse(String option, String text, Instant now) {
        if (text.equals("now")) {
            return now;
        }
        Matcher m = AGO.matcher(text);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            Duration d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
            return now.minus(d);
        }
        if (text.matches("\\d{1,12}(\\.\\d{1,9})?")) {
            String[] parts = text.split("\\.");
            long nanos = parts.length == 2 ? Long.parseLong((parts[1] + "000000000").substring(0, 9)) : 0;
            return Instant.ofEpochSecond(Long.parseLong(parts[0]), nanos);
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new InvalidInputException(option + " " + text + " is not a time: give a time ago (90s, 10m, 2h, 1d), "
                    + "an instant (2026-12-02T21:00:00Z), seconds since the epoch, or now");
        }
    }
}
