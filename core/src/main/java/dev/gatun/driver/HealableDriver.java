package dev.gatun.driver;

/**
 * A driver that also repairs what someone else removed of its state ({@link Repairs}): what
 * {@link SelfHealingDriver} wraps, and what {@link dev.gatun.facade.Gatun#open} gives.
 */
public interface HealableDriver extends GatunDriver, Repairs {
}
