package dev.gatun.cli.host;

import dev.gatun.InvalidInputException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/** What makes the engines find gatun: the CNI link and the netavark plugin file, and how to tell they are gatun's. */
public final class PluginFiles {

    /** The first lines of the netavark plugin file; a file without them is not gatun's. */
    public static final String NETAVARK_MARK = "# gatun's netavark plugin, made by gatun netavark install";

    private PluginFiles() {
    }

    /** The netavark plugin file that runs {@code gatun} (a launcher or the installed command) as gatun netavark VERB. */
    public static String netavarkPlugin(Path gatun) {
        if (gatun.toString().contains("'")) {
            throw new InvalidInputException("the path " + gatun + " has a quote, which the plugin file cannot hold");
        }
        return "#!/bin/sh\n" + NETAVARK_MARK + "; netavark runs it as: gatun VERB [NETNS]\nexec '" + gatun
                + "' netavark \"$@\"\n";
    }

    /** Whether the regular file at {@code p} is a netavark plugin file that gatun wrote. */
    public static boolean isGatunsNetavarkPlugin(Path p) {
        try {
            return Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)
                    && Files.readString(p, StandardCharsets.UTF_8).contains(NETAVARK_MARK);
        } catch (IOException | java.io.UncheckedIOException e) {
            return false; // unreadable, or not text: not gatun's
        }
    }

    /** Whether {@code p} is a CNI link that gatun made: a link to a file named gatun (a launcher or the installed command). */
    public static boolean isGatunsCniLink(Path p) {
        try {
            Path target = Files.readSymbolicLink(p);
            return target.getFileName() != null && target.getFileName().toString().equals("gatun");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}
