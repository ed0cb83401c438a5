/** Anything that stops gracefully, such as a Consumer. */
export interface Stoppable {
  stop(): Promise<void>;
  /** Settles when the target ends by itself or is stopped elsewhere, as a Consumer's done does. */
  readonly done?: Promise<void>;
}

/**
 * Stops `target` when the process gets one of `signals`, so that a
 * deployment's SIGTERM gives running handlers their grace period instead of
 * killing them. Resolves once a signal came and the stop finished: the
 * caller then exits. Settles as `target.done` does if that comes first: a
 * Consumer the broker refuses its queue or token (see Consumer.done) rejects
 * it with the RpcError. The handlers are removed after the first signal; a second
 * signal then gets Node's default (exit), for an operator in a hurry.
 */
export function stopOnSignals(
  target: Stoppable,
  signals: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"],
): Promise<void> {
  return new Promise((resolve, reject) => {
    const detach = (): void => {
      for (const signal of signals) process.off(signal, onSignal);
    };
    const onSignal = (): void => {
      detach();
      target.stop().then(resolve, reject);
    };
    for (const signal of signals) process.on(signal, onSignal);
    target.done?.then(
      () => {
        detach();
        resolve();
      },
      (error: unknown) => {
        detach();
        reject(error);
      },
    );
  });
}
