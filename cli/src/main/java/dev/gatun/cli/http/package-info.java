/** HTTP over unix sockets (Jetty), root-only peers, and the failure class's HTTP statuses; for the local API and the Docker plugin. Imports service. */
package dev.gatun.cli.http;
