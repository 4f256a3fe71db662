/**
 * The gatun command, its serve with the local API, the Docker plugin and the CNI plugin: on
 * core's exported API only. It runs from one jar on the class path (the launcher), so this
 * descriptor is for the compiler: it holds the CLI off core's internals.
 */
module dev.gatun.cli {
    requires dev.gatun.core;
    requires info.picocli;
    requires com.fasterxml.jackson.databind;
    requires org.eclipse.jetty.server;
    requires org.eclipse.jetty.unixdomain.server;
    requires org.eclipse.jetty.client;
    requires io.prometheus.metrics.core;
    requires io.prometheus.metrics.model;
    requires io.prometheus.metrics.exporter.httpserver;
    requires io.prometheus.metrics.instrumentation.jvm;
    requires jdk.net; // the peer credentials of a unix socket
    requires jdk.unsupported; // sun.misc.Signal, for SIGTERM and SIGHUP

    // picocli sets the commands' options and Jackson reads documents, by reflection.
    opens dev.gatun.cli.command to info.picocli;
    opens dev.gatun.cli.json to com.fasterxml.jackson.databind;
    opens dev.gatun.cli.api to com.fasterxml.jackson.databind;
    opens dev.gatun.cli.cni to com.fasterxml.jackson.databind;
    opens dev.gatun.cli.docker to com.fasterxml.jackson.databind;
}
