package dev.gatun.rtnl;

/** An address on a link, as the kernel lists it. */
public record InterfaceAddress(int index, Prefix prefix) {}
