/** The serve's Prometheus metrics. Imports service. */
package dev.gatun.cli.metrics;
