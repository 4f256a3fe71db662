package dev.gatun.cli.command;

import dev.gatun.cli.wire.CommandNames;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The C client forwards the subcommands its own list names; the serve runs those of
 * {@link Served#COMMANDS}. A name only the serve has would silently take the slow JVM path
 * (which forwards it after a JVM start); one only the client has, a round trip for nothing.
 */
class ServedCommandsTest {

    private static final Pattern SERVED_ARRAY = Pattern.compile("SERVED\\[] = \\{([^}]*)}");

    @Test
    void theCClientForwardsExactlyTheCommandsTheServeRuns() throws IOException {
        String source = Files.readString(Path.of("src/main/c/gatun-client.c"));
        Matcher m = SERVED_ARRAY.matcher(source);
        assertThat(m.find()).as("the SERVED array in gatun-client.c").isTrue();
        String[] names = Arrays.stream(m.group(1).split(",")).map(String::strip).filter(n -> !n.equals("NULL"))
                .map(n -> n.replace("\"", "")).toArray(String[]::new);
        assertThat(names).containsExactlyInAnyOrderElementsOf(CommandNames.SERVED);
        assertThat(CommandNames.SERVED).as("every served command is a subcommand").allMatch(GatunCommand.SUBCOMMANDS::containsKey);
    }
}
