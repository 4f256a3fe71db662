package dev.gatun.cli;

import picocli.CommandLine.IVersionProvider;

/** The version the jar was built as. */
final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = Version.class.getPackage().getImplementationVersion();
        return new String[] {"gatun " + (v == null ? "development build" : v)};
    }
}
