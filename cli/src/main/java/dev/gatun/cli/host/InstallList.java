package dev.gatun.cli.host;

import dev.gatun.EnvironmentException;
import dev.gatun.InvalidInputException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * What {@code gatun install} wrote, kept as PREFIX/lib/gatun/installed so that uninstall removes
 * exactly that: each file with the SHA-256 it was written with (a file changed since is no
 * longer gatun's, and stays), each link with its target, each directory install made. One
 * entry per line, tab-separated, the path last.
 */
public record InstallList(List<Entry> entries) {

    /** One thing install made. */
    public sealed interface Entry {
        Path path();
    }

    /** A regular file and the digest of what was written. */
    public record File(Path path, String sha256) implements Entry { }

    /** A symbolic link and its target. */
    public record Link(Path path, Path target) implements Entry { }

    /** A directory that did not exist before. */
    public record Dir(Path path) implements Entry { }

    public InstallList {
        entries = List.copyOf(entries);
    }

    /** The list at {@code path}, or an empty one when there is none. */
    public static InstallList read(Path path) {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return new InstallList(List.of());
        }
        List<Entry> entries = new ArrayList<>();
        try {
            int n = 0;
            for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
                n++;
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                Entry e = switch (f[0]) {
                    case "file" -> f.length == 3 ? new File(Path.of(f[2]), f[1]) : null;
                    case "link" -> f.length == 3 ? new Link(Path.of(f[2]), Path.of(f[1])) : null;
                    case "dir" -> f.length == 2 ? new Dir(Path.of(f[1])) : null;
                    default -> null;
                };
                if (e == null) {
                    throw new EnvironmentException("the install list " + path + " has a line " + n
                            + " that is not gatun's (" + line + "); remove the installation by hand");
                }
                entries.add(e);
            }
        } catch (IOException e) {
            throw new EnvironmentException("cannot read the install list " + path + ": " + e);
        }
        return new InstallList(entries);
    }

    /** Writes the list beside {@code path} and moves it into place. */
    public void write(Path path) {
        StringBuilder text = new StringBuilder("# what gatun install wrote; gatun uninstall removes exactly this\n");
        for (Entry e : entries) {
            String p = e.path().toString();
            switch (e) {
                case File f -> text.append("file\t").append(f.sha256()).append('\t').append(p);
                case Link l -> text.append("link\t").append(l.target()).append('\t').append(p);
                case Dir d -> text.append("dir\t").append(p);
            }
            text.append('\n');
        }
        Path part = path.resolveSibling("." + path.getFileName() + ".part");
        try {
            Files.writeString(part, text, StandardCharsets.UTF_8);
            Files.move(part, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new EnvironmentException("cannot write the install list " + path + ": " + e);
        }
    }

    /** The entry for {@code path}, or null. */
    public Entry at(Path path) {
        for (Entry e : entries) {
            if (e.path().equals(path)) {
                return e;
            }
        }
        return null;
    }

    /** Whether what is at the entry's path now is what install made (a file with the same digest, the same link). */
    public static boolean stillAsMade(Entry e) {
        try {
            return switch (e) {
                case File f -> Files.isRegularFile(f.path(), LinkOption.NOFOLLOW_LINKS)
                        && sha256(Files.readAllBytes(f.path())).equals(f.sha256());
                case Link l -> Files.isSymbolicLink(l.path()) && Files.readSymbolicLink(l.path()).equals(l.target());
                case Dir d -> Files.isDirectory(d.path(), LinkOption.NOFOLLOW_LINKS);
            };
        } catch (IOException x) {
            return false;
        }
    }

    public static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** Refuses a path the list cannot hold on one line. */
    static Path checked(Path p, String what) {
        String s = p.toString();
        if (s.indexOf('\n') >= 0 || s.indexOf('\t') >= 0 || s.indexOf('\r') >= 0) {
            throw new InvalidInputException(what + " " + s.replace("\n", "\\n").replace("\t", "\\t")
                    + " has a tab or a line break, which gatun's install list cannot hold");
        }
        return p;
    }
}
