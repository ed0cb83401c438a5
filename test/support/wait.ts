/** Resolves after `ms` of real time: only for tests whose subject runs on real time (a real server, handlers standing for work). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves after one turn of the event loop, so that callbacks already queued (stream reads, resolved writes) have run. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
