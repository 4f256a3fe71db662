/**
 * The command line: {@code GatunCommand} and its global options, one class per subcommand, and
 * their plumbing ({@code CommandLines} runs a line and maps a failure to its exit code, {@code
 * QuickLine} reads a served publish without picocli, {@code Output}, {@code OptionValue}, {@code
 * UsageError}). A command translates its options into the service's requests and prints the
 * answer. May import service, json, wire, serve (the serve command starts one), api, the adapters it
 * starts or installs, events, host, http and metrics; no package but the entries imports this one.
 */
package dev.gatun.cli.command;
