/** Installing gatun on a host: the runtime's layout, the systemd unit, the plugin files, the training caches. Imports nothing of the cli. */
package dev.gatun.cli.host;
