package dev.gatun.testing;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.testkit.engine.EngineTestKit;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/** The extension deletes the namespaces it made, also when the test that used them fails. */
class FreshNamespacesTest {

    static final List<String> SEEN = new ArrayList<>();

    @ExtendWith(FreshNamespaces.class)
    static class FailingTestWithNamespaces {
        @Test
        void failsAfterUsingTwoNamespaces(NetworkNamespace a, NetworkNamespace b) {
            SEEN.add(a.name());
            SEEN.add(b.name());
            fail("deliberate failure");
        }
    }

    @Test
    void namespacesOfAFailedTestAreDeleted() {
        FreshNamespaces.requirePrivileges();
        SEEN.clear();

        var results = EngineTestKit.engine("junit-jupiter").selectors(selectClass(FailingTestWithNamespaces.class))
                .execute().testEvents();

        assertThat(results.failed().count()).isEqualTo(1);
        assertThat(SEEN).hasSize(2).allSatisfy(name -> {
            assertThat(name).startsWith(FreshNamespaces.PREFIX);
            assertThat(NamedNamespaces.exists(name)).as("%s still exists", name).isFalse();
        });
        assertThat(Oracle.host("ip", "netns", "list")).doesNotContain(SEEN.get(0)).doesNotContain(SEEN.get(1));
    }
}
