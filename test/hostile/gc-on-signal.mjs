// Preloaded (NODE_OPTIONS --import, with --expose-gc) into a broker process
// by tests that measure its memory: SIGUSR2 runs a full garbage collection,
// so that the heap figures its metrics report show what is live, not what
// merely waits to be collected.
process.on("SIGUSR2", () => globalThis.gc?.());
