import type { Logger } from "../logging/logger.js";
import { parseDurationFlag } from "./duration-flag.js";
import { UsageError } from "./usage-error.js";

/** How long after the shutdown grace the broker may take to close its store before it exits regardless. */
export const storeCloseMarginMs = 5_000;

// Longer stops than this are no graceful stop; it also keeps every timer far below Node's 2^31 - 1 ms cap.
const maxShutdownGraceMs = 3_600_000;

/** Parses --shutdown-grace (HOLDSHELF_SHUTDOWN_GRACE): a duration from 0 to 1 h, in milliseconds. */
export function parseShutdownGrace(text: string): number {
  const ms = parseDurationFlag(text, "shutdown-grace");
  if (ms > maxShutdownGraceMs)
    throw new UsageError(`--shutdown-grace (HOLDSHELF_SHUTDOWN_GRACE) is at most 1h, not "${text}"`);
  return ms;
}

/** The exit status of a stop cut short by its deadline. */
export const stopDeadlineExitStatus = 1;

/**
 * Arms the stop's outer bound: if the process still runs `ms` from now, it
 * logs and exits at once, whatever still runs (a store that will not close,
 * a hung disk). Orchestrators kill at their own timeouts; an exit of our own
 * says why. The stores are crash-safe, so this is no worse than a kill. The
 * timer does not keep a process that stopped cleanly alive.
 */
export function armStopDeadline(ms: number, logger: Logger): void {
  setTimeout(() => {
    logger.error("the stop ran past its deadline: exiting without a clean close", { deadlineMs: ms });
    process.exit(stopDeadlineExitStatus);
  }, ms).unref();
}
