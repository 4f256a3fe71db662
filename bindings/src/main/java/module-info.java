/**
 * The FFM bindings generated from native-headers/ (bindings/generate): for gatun's core alone.
 * The bench's C-floor comparisons read them from the class path, where this is not in force.
 */
module dev.gatun.bindings {
    exports dev.gatun.bindings.internal to dev.gatun.core;
}
