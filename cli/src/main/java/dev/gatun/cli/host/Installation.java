package dev.gatun.cli.host;

import dev.gatun.EnvironmentException;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Installs gatun's runtime under a prefix and removes it again, exactly: PREFIX/lib/gatun (the
 * launcher, the jar, the launcher's Java finder, the list of what was written), PREFIX/bin/gatun
 * (the C client: the gatun command), and where asked gatun.service, the CNI link and the netavark
 * plugin file. Nothing is written until every path is known to be free or gatun's; a file that is
 * not gatun's (or was changed since gatun wrote it) is refused and left alone.
 */
public final class Installation {

    /** The launcher's ahead-of-time caches in PREFIX/lib/gatun: the serve's made by install (see ServeCache), the others at the first commands. */
    static final List<String> CACHES = List.of("gatun-cli.aot", "gatun-cli-json.aot", "gatun-serve.aot");

    /** Where to install: the prefix, and the optional parts (null when not asked). */
    public record Target(Path prefix, Path unitDir, Path cniBinDir, Path netavarkPluginDir) {
        public Target {
            prefix = InstallList.checked(prefix.toAbsolutePath().normalize(), "--prefix");
            unitDir = unitDir == null ? null : InstallList.checked(unitDir.toAbsolutePath().normalize(), "--unit-dir");
            cniBinDir = cniBinDir == null ? null
                    : InstallList.checked(cniBinDir.toAbsolutePath().normalize(), "--cni-bin-dir");
            netavarkPluginDir = netavarkPluginDir == null ? null
                    : InstallList.checked(netavarkPluginDir.toAbsolutePath().normalize(), "--netavark-plugin-dir");
        }

        public Path home() {
            return prefix.resolve("lib/gatun");
        }

        public Path command() {
            return prefix.resolve("bin/gatun");
        }

        public Path list() {
            return home().resolve(RuntimeLayout.LIST);
        }
    }

    /** What happened to one path. */
    public record Step(String outcome, Path path) { }

    /** One thing to put in place; {@code alsoGatuns} accepts what gatun made there without this list (an older install). */
    private record Wanted(Path path, byte[] bytes, boolean executable, Path linkTarget, Predicate<Path> alsoGatuns) {
        boolean isLink() {
            return linkTarget != null;
        }
    }

    private Installation() {
    }

    /** Installs the runtime {@code from} (a checkout or another installation) at {@code to}. */
    public static List<Step> install(RuntimeLayout from, Target to) {
        Path command = to.command();
        for (Path p : List.of(from.launcher(), from.jar(), from.javaHomeScript(), from.client())) {
            if (!Files.isRegularFile(p)) {
                throw new EnvironmentException("install: " + p + " is missing" + (p.equals(from.client())
                        ? " (the C client, built by the launcher with gcc: install gcc, then run ./gatun --version)"
                        : " (build gatun first: ./gatun --version)"));
            }
        }
        Path launcher = to.home().resolve("gatun");
        if (to.unitDir() != null && !launcher.toString().matches("[A-Za-z0-9/._+-]+")) {
            throw new InvalidInputException("install: --prefix " + to.prefix() + " makes the unit's ExecStart "
                    + launcher + ", which may hold only letters, digits and / . _ + -");
        }
        List<Wanted> wanted = new ArrayList<>();
        Predicate<Path> none = p -> false;
        wanted.add(file(launcher, read(from.launcher()), true, none));
        wanted.add(file(to.home().resolve("gatun-cli.jar"), read(from.jar()), false, none));
        wanted.add(file(to.home().resolve("java-home.sh"), read(from.javaHomeScript()), false, none));
        wanted.add(file(command, read(from.client()), true, none));
        if (to.unitDir() != null) {
            wanted.add(file(to.unitDir().resolve(ServiceUnit.NAME),
                    ServiceUnit.text(launcher).getBytes(StandardCharsets.UTF_8), false, none));
        }
        if (to.cniBinDir() != null) {
            wanted.add(new Wanted(to.cniBinDir().resolve("gatun"), null, false, command, PluginFiles::isGatunsCniLink));
        }
        if (to.netavarkPluginDir() != null) {
            wanted.add(file(to.netavarkPluginDir().resolve("gatun"),
                    PluginFiles.netavarkPlugin(command).getBytes(StandardCharsets.UTF_8), true,
                    PluginFiles::isGatunsNetavarkPlugin));
        }

        InstallList before = InstallList.read(to.list());
        Map<Path, String> outcomes = new LinkedHashMap<>();
        List<String> refused = new ArrayList<>();
        for (Wanted w : wanted) {
            String o = outcomeFor(w, before);
            if (o == null) {
                refused.add(w.path() + (before.at(w.path()) != null ? " (changed since gatun installed it)" : ""));
            } else {
                outcomes.put(w.path(), o);
            }
        }
        if (!refused.isEmpty()) {
            throw new ConflictException("install: " + String.join(", ", refused) + (refused.size() == 1 ? " is" : " are")
                    + " not gatun's; nothing was written (remove " + (refused.size() == 1 ? "it" : "them")
                    + " first if gatun should replace " + (refused.size() == 1 ? "it" : "them") + ")");
        }

        List<InstallList.Entry> entries = new ArrayList<>();
        for (InstallList.Entry e : before.entries()) {
            if (e instanceof InstallList.Dir) {
                entries.add(e); // made by an earlier install: still install's to remove
            }
        }
        List<Step> steps = new ArrayList<>();
        try {
            for (Wanted w : wanted) {
                for (Path dir : makeParents(w.path())) {
                    entries.add(new InstallList.Dir(dir));
                }
            }
            for (Wanted w : wanted) {
                String o = outcomes.get(w.path());
                if (!o.equals("unchanged")) {
                    put(w);
                }
                entries.add(w.isLink() ? new InstallList.Link(w.path(), w.linkTarget())
                        : new InstallList.File(w.path(), InstallList.sha256(w.bytes())));
                steps.add(new Step(o, w.path()));
            }
        } catch (IOException e) {
            throw new EnvironmentException("install: cannot write under " + to.prefix() + ": " + e
                    + "; what was written so far is in " + to.list());
        } finally {
            // Kept whatever happened: what was written is listed, so uninstall can remove it.
            for (InstallList.Entry e : before.entries()) {
                if (!(e instanceof InstallList.Dir) && entriesMiss(entries, e.path()) && InstallList.stillAsMade(e)) {
                    entries.add(e); // an earlier install's part not asked for now (a CNI link, say): kept
                    steps.add(new Step("kept (installed before)", e.path()));
                }
            }
            if (Files.isDirectory(to.home())) {
                new InstallList(entries).write(to.list());
            }
        }
        return steps;
    }

    /** Removes exactly what the list at {@code prefix} names, and the launcher's caches. */
    public static List<Step> uninstall(Path prefix) {
        Target to = new Target(prefix, null, null, null);
        if (!Files.exists(to.list(), LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        InstallList list = InstallList.read(to.list());
        List<String> changed = new ArrayList<>();
        for (InstallList.Entry e : list.entries()) {
            if (!(e instanceof InstallList.Dir) && Files.exists(e.path(), LinkOption.NOFOLLOW_LINKS)
                    && !InstallList.stillAsMade(e)) {
                changed.add(e.path().toString());
            }
        }
        if (!changed.isEmpty()) {
            throw new ConflictException("uninstall: " + String.join(", ", changed) + (changed.size() == 1 ? " was" : " were")
                    + " changed since gatun installed " + (changed.size() == 1 ? "it" : "them")
                    + " and is no longer gatun's; nothing was removed (remove or restore it by hand, then run "
                    + "gatun uninstall again)");
        }
        List<Step> steps = new ArrayList<>();
        try {
            for (InstallList.Entry e : list.entries()) {
                if (!(e instanceof InstallList.Dir) && Files.deleteIfExists(e.path())) {
                    steps.add(new Step("removed", e.path()));
                }
            }
            for (String cache : CACHES) {
                if (Files.deleteIfExists(to.home().resolve(cache))) {
                    steps.add(new Step("removed", to.home().resolve(cache)));
                }
            }
            Files.delete(to.list());
            steps.add(new Step("removed", to.list()));
            List<InstallList.Entry> dirs = new ArrayList<>(list.entries().stream()
                    .filter(e -> e instanceof InstallList.Dir).toList());
            dirs.sort((a, b) -> b.path().getNameCount() - a.path().getNameCount());
            for (InstallList.Entry d : dirs) {
                if (isEmptyDirectory(d.path())) {
                    Files.delete(d.path());
                    steps.add(new Step("removed", d.path()));
                } else if (Files.isDirectory(d.path())) {
                    steps.add(new Step("kept (not empty)", d.path()));
                }
            }
        } catch (IOException e) {
            throw new EnvironmentException("uninstall: cannot remove under " + to.prefix() + ": " + e);
        }
        return steps;
    }

    private static boolean entriesMiss(List<InstallList.Entry> entries, Path path) {
        return entries.stream().noneMatch(e -> e.path().equals(path));
    }

    private static Wanted file(Path path, byte[] bytes, boolean executable, Predicate<Path> alsoGatuns) {
        return new Wanted(InstallList.checked(path, "the path"), bytes, executable, null, alsoGatuns);
    }

    /** "installed", "unchanged", "replaced", or null when the path holds what is not gatun's. */
    private static String outcomeFor(Wanted w, InstallList before) {
        Path p = w.path();
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(p)) {
            return "installed";
        }
        try {
            if (w.isLink() ? Files.isSymbolicLink(p) && Files.readSymbolicLink(p).equals(w.linkTarget())
                    : Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) && Arrays.equals(Files.readAllBytes(p), w.bytes())) {
                return "unchanged";
            }
        } catch (IOException e) {
            return null;
        }
        InstallList.Entry old = before.at(p);
        if ((old != null && InstallList.stillAsMade(old)) || w.alsoGatuns().test(p)) {
            return "replaced";
        }
        return null;
    }

    /** Makes the missing parents of {@code path}, returning those it made, outermost first. */
    private static List<Path> makeParents(Path path) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path d = path.getParent(); d != null && !Files.exists(d); d = d.getParent()) {
            missing.addFirst(d);
        }
        for (Path d : missing) {
            Files.createDirectory(d);
            Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return missing;
    }

    /** Writes beside the path and moves it in: nothing ever runs half a file. */
    private static void put(Wanted w) throws IOException {
        Path part = w.path().resolveSibling(".gatun-install.part");
        Files.deleteIfExists(part);
        if (w.isLink()) {
            Files.createSymbolicLink(part, w.linkTarget());
        } else {
            Files.write(part, w.bytes());
            Files.setPosixFilePermissions(part, PosixFilePermissions.fromString(w.executable() ? "rwxr-xr-x" : "rw-r--r--"));
        }
        Files.move(part, w.path(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static byte[] read(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new EnvironmentException("install: cannot read " + p + ": " + e);
        }
    }

    private static boolean isEmptyDirectory(Path d) throws IOException {
        if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (var s = Files.list(d)) {
            return s.findAny().isEmpty();
        }
    }
}
