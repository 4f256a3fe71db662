/**
 * The entries: {@link dev.gatun.cli.Main}, the gatun command (a CNI or netavark plugin call when
 * it is one, else a line forwarded to a serve, else run in this JVM), and
 * {@link dev.gatun.cli.Training}, the launcher's training run for its ahead-of-time caches. Nothing
 * else in the cli imports this package.
 */
package dev.gatun.cli;
