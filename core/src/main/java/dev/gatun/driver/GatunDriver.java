package dev.gatun.driver;

/**
 * gatun's driver as its callers see it, every role in one: the engine contract
 * ({@link NetworkDriver}), networks made as containers come ({@link ContainerSetup}), ports to
 * containers outside its networks ({@link OutsidePorts}), other programs' bridges
 * ({@link BridgeAdoption}) and what it finds on the host ({@link HostSurvey}). An adapter takes
 * only the role it uses. Every method of a role is abstract (but two conveniences of
 * NetworkDriver), so a decorator ({@link SelfHealingDriver}) must say what each does.
 */
public interface GatunDriver extends ContainerSetup, OutsidePorts, BridgeAdoption, HostSurvey {
}
