// How long consumers take between receiving and deleting a message, set
// beside the visibility timeout: a p99 near the timeout means messages are
// about to be delivered twice.
import type { ProcessingTime as Processing } from "./api-types.js";
import { parseDuration } from "../../src/time/duration-text.js";
import { formatAge, plural } from "./format.js";

// Above this share of the visibility timeout, slow consumers risk losing their lease.
const warnShare = 0.8;

/** The queue's processing-time percentiles against its visibility timeout. */
export function ProcessingTime({
  processing,
  visibilityTimeout,
}: {
  processing: Processing | null;
  visibilityTimeout: string | undefined;
}) {
  const timeoutMs = (visibilityTimeout === undefined ? undefined : parseDuration(visibilityTimeout)) ?? null;
  if (processing === null) {
    return (
      <p data-testid="processing-time">
        No processing times for this queue yet: the broker that serves it measures them from its next sample on.
        {timeoutMs === null ? "" : ` The visibility timeout is ${formatAge(timeoutMs)}.`}
      </p>
    );
  }
  const window = formatAge(processing.windowMs);
  if (processing.p99Ms === null || processing.p50Ms === null) {
    return (
      <p data-testid="processing-time">
        No messages deleted in the last {window}, so no processing time yet
        {timeoutMs === null ? "." : `; the visibility timeout is ${formatAge(timeoutMs)}.`}
      </p>
    );
  }
  const warn = timeoutMs !== null && timeoutMs > 0 && processing.p99Ms > warnShare * timeoutMs;
  return (
    <div>
      <p data-testid="processing-time">
        Processing time, receive to delete: p50 <strong>{formatAge(processing.p50Ms)}</strong>, p99{" "}
        <strong>{formatAge(processing.p99Ms)}</strong>
        {timeoutMs !== null && ` of a ${formatAge(timeoutMs)} visibility timeout`} (
        {plural(processing.count, "message")} in the last {window}).
      </p>
      {warn && (
        <p class="mark mark-warning block" data-testid="processing-warning">
          <span aria-hidden="true">⚠ </span>
          The p99 is over {warnShare * 100}% of the visibility timeout: slow messages may be delivered again while still
          being processed. Raise the visibility timeout or extend leases.
        </p>
      )}
    </div>
  );
}
