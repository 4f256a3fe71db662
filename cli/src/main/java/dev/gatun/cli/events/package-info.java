/** The serve's event log: what was published, unpublished and repaired, by whom and why, as {@code gatun events} and the API stream it. Imports nothing of the cli. */
package dev.gatun.cli.events;
