/**
 * The CNI plugin, main and chained: CNI's environment and config translated into the service's
 * requests, answers and errors into the spec's documents. An adapter: imports service and wire,
 * never another adapter or a command.
 */
package dev.gatun.cli.cni;
