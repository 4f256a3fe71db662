/**
 * Measurements, not tests of speed: each runs only with {@code -Dgatun.measure=true} (a smoke of
 * one runs in ci/test), prints its medians and ratios, and asserts only that every run it timed
 * succeeded. How to run each is in its class comment; what they found is in bench/runs/.
 */
package dev.gatun.cli.measure;
