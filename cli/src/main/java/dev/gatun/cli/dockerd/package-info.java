/**
 * {@code serve --docker}: follows dockerd's API and event stream and programs what its iptables
 * rules would have for Docker's own bridges and containers. An adapter: imports events only.
 */
package dev.gatun.cli.dockerd;
