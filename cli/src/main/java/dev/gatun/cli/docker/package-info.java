/**
 * The Docker plugin (a remote network driver on a unix socket): Docker's requests translated into
 * the service's, failures into Docker's {@code Err}. An adapter: imports service, http and events,
 * never another adapter or a command.
 */
package dev.gatun.cli.docker;
