/**
 * The netavark plugin (Podman 5): netavark's calls translated into the service's requests,
 * answers into netavark's JSON. An adapter: imports service, wire and json, never another adapter
 * or a command.
 */
package dev.gatun.cli.netavark;
