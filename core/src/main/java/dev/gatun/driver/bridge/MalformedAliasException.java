package dev.gatun.driver.bridge;

import dev.gatun.GatunException;

/**
 * A link alias that starts as gatun's but whose fields do not describe a network or an
 * endpoint: written by hand, by another tool, or cut short. The listing that meets it skips
 * that link and says so.
 */
final class MalformedAliasException extends GatunException {

    MalformedAliasException(String alias, String problem) {
        super("link alias '" + alias + "' is not one gatun can read: " + problem);
    }
}
