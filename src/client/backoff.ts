// Capped so a long outage is retried every few seconds, not every few minutes.
const baseMs = 100;
const maxMs = 5_000;

/**
 * How long to wait before retry number `attempt` (0 first): exponential with
 * "equal jitter", half fixed and half random, so that many clients that
 * failed together do not retry together, yet none retries in a hot loop.
 */
export function backoffDelayMs(attempt: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 16));
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}
