package dev.gatun.cli.service;

/**
 * Publish ports taking each host key another owner holds exactly, in one transaction; the old
 * owner's UDP conntrack entries of those ports go unless {@code keepUdpFlows}.
 */
public record ReplacePorts(Publish publish, boolean keepUdpFlows) {}
