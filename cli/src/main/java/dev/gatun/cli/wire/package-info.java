/**
 * What a client and a serve agree on: the framing of the one-shot calls ({@code ServeWire}), the
 * client that forwards a call to a serve and runs it itself when none answers ({@code
 * ServeClient}), the start lock, the names in a command line and a call's refusal. Used by the
 * entries, the adapters' mains and the serve; imports only service and http.
 */
package dev.gatun.cli.wire;
