package dev.gatun.cli;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The rooms of core and the cli, as their package-infos say them, held against the compiled
 * classes (the tests and core's test jar left out): no two packages import each other, even
 * through others; the engine adapters stay apart and take the driver's roles they use, not
 * the whole driver; nothing outside core reaches into its internals or the generated bindings.
 */
class ArchitectureTest {

    /** Main classes only: not the test classes of this module, nor core's test jar on the class path. */
    private static final ImportOption MAIN_ONLY = (Location l) -> !l.contains("/test-classes/") && !l.contains("-tests.jar");

    private static final JavaClasses GATUN = new ClassFileImporter().withImportOption(MAIN_ONLY)
            .importPackages("dev.gatun");

    private static final String[] ADAPTERS = {"dev.gatun.cli.docker..", "dev.gatun.cli.dockerd..", "dev.gatun.cli.cni..",
            "dev.gatun.cli.netavark.."};

    @Test
    void coreHasNoPackageCycle() {
        // Each package its own slice ((**) keeps subpackages apart): nft and nft.expr are two.
        slices().matching("dev.gatun.(**)").should().beFreeOfCycles()
                .check(GATUN.that(resideInAPackage("dev.gatun..").and(resideInAPackage("dev.gatun.cli..").negate())
                        .and(resideInAPackage("dev.gatun.bindings..").negate())));
    }

    @Test
    void theCliHasNoPackageCycle() {
        slices().matching("dev.gatun.cli.(**)").should().beFreeOfCycles()
                .check(GATUN.that(resideInAPackage("dev.gatun.cli..")));
    }

    @Test
    void noAdapterImportsAnotherAdapterOrTheCommandsOrTheServe() {
        for (String adapter : ADAPTERS) {
            String[] others = java.util.Arrays.stream(ADAPTERS).filter(a -> !a.equals(adapter)).toArray(String[]::new);
            noClasses().that().resideInAPackage(adapter).should().dependOnClassesThat()
                    .resideInAnyPackage(others).check(GATUN);
            noClasses().that().resideInAPackage(adapter).should().dependOnClassesThat()
                    .resideInAnyPackage("dev.gatun.cli.command..", "dev.gatun.cli.serve..", "dev.gatun.cli.api..")
                    .check(GATUN);
        }
    }

    @Test
    void adaptersTakeTheDriversRolesNotTheWholeDriverNorItsRepairs() {
        noClasses().that().resideInAnyPackage(ADAPTERS).should().dependOnClassesThat()
                .haveFullyQualifiedName("dev.gatun.driver.GatunDriver")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.gatun.driver.HealableDriver")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.gatun.driver.Repairs")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.gatun.driver.SelfHealingDriver")
                .check(GATUN);
    }

    @Test
    void theServiceAndTheWireImportNothingAboveThem() {
        noClasses().that().resideInAPackage("dev.gatun.cli.service..").should().dependOnClassesThat()
                .resideInAnyPackage("dev.gatun.cli.command..", "dev.gatun.cli.serve..", "dev.gatun.cli.api..",
                        "dev.gatun.cli.wire..", "dev.gatun.cli.json..", "dev.gatun.cli.http..")
                .check(GATUN);
        noClasses().that().resideInAPackage("dev.gatun.cli.wire..").should().dependOnClassesThat()
                .resideInAnyPackage("dev.gatun.cli.command..", "dev.gatun.cli.serve..", "dev.gatun.cli.api..")
                .check(GATUN);
        noClasses().that().resideInAPackage("dev.gatun.cli.serve..").should().dependOnClassesThat()
                .resideInAPackage("dev.gatun.cli.command..").check(GATUN);
    }

    @Test
    void nothingOutsideCoreReachesItsInternalsOrTheBindings() {
        noClasses().that().resideInAPackage("dev.gatun.cli..").should().dependOnClassesThat()
                .resideInAnyPackage("dev.gatun.internal..", "dev.gatun.driver.bridge..", "dev.gatun.bindings..")
                .check(GATUN);
    }
}
