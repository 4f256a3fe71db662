package dev.gatun.cli.service;

import picocli.CommandLine.IVersionProvider;

/** The version the jar was built as. */
public final class Version implements IVersionProvider {

    /** The jar's version, or "development build" outside a built jar. */
    public static String text() {
        String v = Version.class.getPackage().getImplementationVersion();
        return v == null ? "development build" : v;
    }

    @Override
    public String[] getVersion() {
        return new String[] {"gatun " + text()};
    }
}
