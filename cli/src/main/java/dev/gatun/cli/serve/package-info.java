/**
 * A serve's runtime: its two sockets started and stopped together ({@code ApiSockets}: the local
 * API's HTTP server and the one-shot calls' own, {@code OneShotServer}), the calls run for clients
 * ({@code OneShotCalls}, the command lines through a {@code CommandLineRunner} the serve command
 * hands in), the warm-up before its ready line, the heap's settling and its throwaway namespaces.
 * May import api, wire, service, events, http and the CNI and netavark adapters (whose calls it
 * runs); never the commands.
 */
package dev.gatun.cli.serve;
