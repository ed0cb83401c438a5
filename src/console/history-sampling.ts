import type { Clock } from "../time/clock.js";
import type { QueueHistory } from "./queue-history.js";

/** A running sampler of a QueueHistory. */
export interface HistorySampling {
  stop(): void;
}

/**
 * Samples the history now and then at its interval, until stopped. Every
 * broker samples the queues it serves, console or not: ListQueueActivity
 * answers from the history, and in cluster mode a console on another broker
 * asks this one for its queues'.
 */
export function startHistorySampling(
  history: QueueHistory,
  clock: Clock,
  logFailure: (error: unknown) => void,
): HistorySampling {
  const sample = (): void => {
    try {
      history.sample(clock.now());
    } catch (error) {
      logFailure(error);
    }
  };
  sample();
  const timer = setInterval(sample, history.shape.sampleIntervalMs);
  // Sampling alone must not keep a process alive.
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
