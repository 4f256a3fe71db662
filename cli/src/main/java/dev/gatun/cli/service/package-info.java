/**
 * The one service every entry point calls: typed requests (create a network, attach, publish, ...)
 * and their results over a driver lent by {@code Drivers}, the doctor's checks, and the one failure
 * class each adapter maps into its own terms ({@code Failure}, and {@code ExitCode} for the command
 * line). Also the served context ({@code Served}), the serve's socket paths and the version. Imports
 * nothing of the cli: everything else may import it.
 */
package dev.gatun.cli.service;
