/**
 * What the cli's tests share: the launcher and a serve run as users run them ({@link
 * dev.gatun.cli.testing.GatunCli}, {@link dev.gatun.cli.testing.GatunServe}), the labs that start
 * real engines in namespaces of their own (dockerd, Podman 4 and 5, containerd, the Debian 13 test
 * bed), the one image they all import ({@link dev.gatun.cli.testing.BusyboxRootfs}), a LAN for a
 * lab's host ({@link dev.gatun.cli.testing.Outside}), and probes. Tests of one adapter stay in that
 * adapter's package; what two of them need lives here. Core's own fixtures are in
 * {@code dev.gatun.testing} (its test jar).
 */
package dev.gatun.cli.testing;
