package dev.gatun.cli.host;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** install and uninstall on scratch directories, from a checkout-shaped runtime of the test's own. */
class InstallationTest {

    @TempDir
    Path tmp;

    private Path checkout;
    private Path prefix;
    private Path units;

    @BeforeEach
    void aCheckoutAndAPrefixWithSomethingInIt() throws IOException {
        checkout = tmp.resolve("checkout");
        write(checkout.resolve("gatun"), "#!/bin/sh\necho launcher\n");
        write(checkout.resolve("cli/target/gatun-cli.jar"), "jar v1");
        write(checkout.resolve("ci/java-home.sh"), "find_java_home() { :; }\n");
        write(checkout.resolve("cli/target/gatun-client"), "client v1");
        prefix = tmp.resolve("prefix");
        write(prefix.resolve("bin/someone-elses"), "theirs");
        write(prefix.resolve("lib/other/lib.so"), "theirs too");
        units = tmp.resolve("units");
    }

    private Installation.Target target() {
        return new Installation.Target(prefix, units, null, null);
    }

    @Test
    void installPutsTheRuntimeUnderThePrefixAndUninstallLeavesThePrefixAsItWas() throws IOException {
        Map<String, String> before = tree(tmp);
        Installation.install(RuntimeLayout.of(checkout), target());

        assertThat(Files.readString(prefix.resolve("bin/gatun"))).isEqualTo("client v1");
        assertThat(Files.isExecutable(prefix.resolve("bin/gatun"))).isTrue();
        assertThat(Files.readString(prefix.resolve("lib/gatun/gatun-cli.jar"))).isEqualTo("jar v1");
        assertThat(Files.isExecutable(prefix.resolve("lib/gatun/gatun"))).isTrue();
        assertThat(Files.readString(units.resolve("gatun.service")))
                .contains("ExecStart=" + prefix.resolve("lib/gatun/gatun") + " serve", "Type=notify");
        RuntimeLayout installed = RuntimeLayout.of(prefix.resolve("lib/gatun"));
        assertThat(installed.installed()).isTrue();
        assertThat(installed.entry()).isEqualTo(prefix.resolve("bin/gatun"));
        assertThat(installed.jar()).hasContent("jar v1");

        // The launcher's caches, made at its first commands, go too.
        write(prefix.resolve("lib/gatun/gatun-cli.aot"), "cache");
        Installation.uninstall(prefix);
        assertThat(tree(tmp)).isEqualTo(before);
    }

    @Test
    void installingTwiceChangesNothingAndANewerBuildReplacesWhatChanged() throws IOException {
        Installation.install(RuntimeLayout.of(checkout), target());
        Map<String, String> once = tree(tmp);
        assertThat(Installation.install(RuntimeLayout.of(checkout), target()))
                .extracting(Installation.Step::outcome).containsOnly("unchanged");
        assertThat(tree(tmp)).isEqualTo(once);

        write(checkout.resolve("cli/target/gatun-cli.jar"), "jar v2");
        assertThat(Installation.install(RuntimeLayout.of(checkout), target()))
                .filteredOn(s -> s.outcome().equals("replaced")).extracting(Installation.Step::path)
                .containsExactly(prefix.resolve("lib/gatun/gatun-cli.jar"));
        assertThat(prefix.resolve("lib/gatun/gatun-cli.jar")).hasContent("jar v2");
        Installation.uninstall(prefix);
        assertThat(prefix.resolve("lib/gatun")).doesNotExist();
        assertThat(Installation.uninstall(prefix)).isEmpty(); // again: nothing there, no error
    }

    @Test
    void aPathTakenByAFileThatIsNotGatunsIsRefusedAndNothingIsWritten() throws IOException {
        write(prefix.resolve("bin/gatun"), "another program called gatun");
        Map<String, String> before = tree(tmp);
        assertThatThrownBy(() -> Installation.install(RuntimeLayout.of(checkout), target()))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining(prefix.resolve("bin/gatun") + " is not gatun's")
                .hasMessageContaining("nothing was written");
        assertThat(tree(tmp)).isEqualTo(before);
    }

    @Test
    void aFileChangedSinceInstallIsNotRemovedAndNeitherIsAnythingElse() throws IOException {
        Installation.install(RuntimeLayout.of(checkout), target());
        write(units.resolve("gatun.service"), "edited by the operator");
        Map<String, String> before = tree(tmp);
        assertThatThrownBy(() -> Installation.uninstall(prefix))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining(units.resolve("gatun.service") + " was changed since gatun installed it")
                .hasMessageContaining("nothing was removed");
        assertThat(tree(tmp)).isEqualTo(before);
        // Nor does an install write over it.
        assertThatThrownBy(() -> Installation.install(RuntimeLayout.of(checkout), target()))
                .isInstanceOf(ConflictException.class).hasMessageContaining("changed since gatun installed it");
    }

    @Test
    void theEnginesEntryPointsRunTheInstalledCommandAndAreKeptByALaterInstallThatDoesNotNameThem() throws IOException {
        Path cni = tmp.resolve("cni/bin");
        Path netavark = tmp.resolve("netavark");
        // A link that gatun cni install made from a checkout: gatun's, so replaced.
        Files.createDirectories(cni);
        Files.createSymbolicLink(cni.resolve("gatun"), checkout.resolve("gatun"));
        Map<String, String> before = tree(tmp);
        Installation.install(RuntimeLayout.of(checkout), new Installation.Target(prefix, null, cni, netavark));
        assertThat(Files.readSymbolicLink(cni.resolve("gatun"))).isEqualTo(prefix.resolve("bin/gatun"));
        assertThat(netavark.resolve("gatun")).content()
                .contains(PluginFiles.NETAVARK_MARK, "exec '" + prefix.resolve("bin/gatun") + "' netavark \"$@\"");
        assertThat(units.resolve("gatun.service")).doesNotExist(); // --no-systemd

        assertThat(Installation.install(RuntimeLayout.of(checkout), target()))
                .extracting(Installation.Step::outcome, Installation.Step::path)
                .contains(org.assertj.core.groups.Tuple.tuple("kept (installed before)", cni.resolve("gatun")));
        assertThat(Files.isSymbolicLink(cni.resolve("gatun"))).isTrue();
        Installation.uninstall(prefix);
        // The link of the checkout was replaced, so it is gone with the rest; everything else is as before.
        Map<String, String> expected = new TreeMap<>(before);
        expected.remove(tmp.relativize(cni.resolve("gatun")).toString());
        assertThat(tree(tmp)).isEqualTo(expected);
    }

    @Test
    void aCniLinkToSomethingElseIsNotGatuns() throws IOException {
        Path cni = tmp.resolve("cni");
        Files.createDirectories(cni);
        Files.createSymbolicLink(cni.resolve("gatun"), Path.of("/usr/lib/cni/bridge"));
        assertThatThrownBy(() -> Installation.install(RuntimeLayout.of(checkout),
                new Installation.Target(prefix, null, cni, null)))
                .isInstanceOf(ConflictException.class).hasMessageContaining(cni.resolve("gatun") + " is not gatun's");
        assertThat(prefix.resolve("lib/gatun")).doesNotExist();
    }

    @Test
    void anIncompleteRuntimeOrAPathTheListCannotHoldIsRefusedBeforeAnythingIsWritten() throws IOException {
        Files.delete(checkout.resolve("cli/target/gatun-client"));
        assertThatThrownBy(() -> Installation.install(RuntimeLayout.of(checkout), target()))
                .hasMessageContaining("gatun-client is missing").hasMessageContaining("gcc");
        write(checkout.resolve("cli/target/gatun-client"), "client v1");
        assertThatThrownBy(() -> new Installation.Target(tmp.resolve("a\nb"), null, null, null))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("--prefix");
        assertThatThrownBy(() -> Installation.install(RuntimeLayout.of(checkout),
                new Installation.Target(tmp.resolve("with space"), units, null, null)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("ExecStart");
        assertThat(prefix.resolve("lib/gatun")).doesNotExist();
    }

    /** Every path under {@code root} with what it is: a file's content, a link's target, "dir". */
    private static Map<String, String> tree(Path root) throws IOException {
        Map<String, String> t = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.toList()) {
                String what = Files.isSymbolicLink(p) ? "-> " + Files.readSymbolicLink(p)
                        : Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "dir"
                        : Files.readString(p, StandardCharsets.ISO_8859_1) + " " + Files.getPosixFilePermissions(p);
                t.put(root.relativize(p).toString(), what);
            }
        }
        return t;
    }

    private static void write(Path p, String text) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }
}
