package dev.gatun.netns;

import dev.gatun.InvalidInputException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.StringLength;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NamespaceNamePropertiesTest {

    @Property
    void anyNameWithASlashIsRefusedAndNamed(@ForAll @StringLength(max = 40) String before,
                                           @ForAll @StringLength(max = 40) String after) {
        String name = before + "/" + after;
        assertThatThrownBy(() -> NamedNamespaces.validateName(name)).isInstanceOf(InvalidInputException.class);
    }

    @Property
    void plainNamesUpToTheKernelLimitAreAccepted(@ForAll("plainNames") String name) {
        assertThatCode(() -> NamedNamespaces.validateName(name)).doesNotThrowAnyException();
    }

    @Property
    void namesOverTheLimitInBytesAreRefused(@ForAll @AlphaChars @StringLength(min = 1, max = 200) String start) {
        // 'é' is two bytes in UTF-8: the limit is on bytes, not characters.
        String name = start + "é".repeat(128);
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        assertThatThrownBy(() -> NamedNamespaces.validateName(name)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(bytes + " bytes");
    }

    /** Whatever a caller sends as a name or a path is a namespace or refused as input, never another failure. */
    @Property
    void anyNameOrPathIsANamespaceOrRefusedAsInput(@ForAll @StringLength(max = 40) String name,
                                                   @ForAll boolean asPath) {
        String given = asPath ? "/run/netns/" + name : name;
        try {
            NetworkNamespace.of(given);
        } catch (InvalidInputException refused) {
            // a refusal is the answer for every name that is no namespace
        }
    }

    @Provide
    Arbitrary<String> plainNames() {
        return Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9').withChars('-', '_', '.')
                .ofMinLength(1).ofMaxLength(255).filter(s -> !s.equals(".") && !s.equals(".."));
    }
}
