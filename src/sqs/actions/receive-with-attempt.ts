import { timestampMs, type Duration } from "@bufbuild/protobuf/wkt";
import type { EntryResult, ReceivedMessage } from "../../../gen/holdshelf/v1/message_pb.js";
import type { SqsActionContext } from "./action-context.js";
import type { AttemptKey } from "./receive-attempts.js";

/** What ReceiveMessage asks the broker for. */
export interface ReceiveCall {
  readonly queue: string;
  readonly maxMessages: number;
  readonly visibilityTimeout?: Duration;
  readonly waitTime?: Duration;
}

// Concurrent retries of one id that each find the attempt changed meet again at most this often before one receives.
const maxRounds = 3;

/**
 * A ReceiveMessage on a FIFO queue that names a ReceiveRequestAttemptId. If
 * the same caller received on this queue under this id within five minutes,
 * none of that answer's leases has run out, and none of its messages was
 * deleted or had its visibility changed through this endpoint since, the
 * leases are renewed for the visibility timeout (the request's, else the
 * queue's; no further than the queue's max_lease_duration allows) and that
 * answer is returned again, receipt handles included. Otherwise it is a new
 * receive, remembered under the id. A retry that arrives while the first
 * receive still waits (a long poll), or while another retry of the id is
 * deciding, shares that answer, also when it ends empty.
 */
export async function receiveWithAttempt(
  context: SqsActionContext,
  key: AttemptKey,
  call: ReceiveCall,
): Promise<readonly ReceivedMessage[]> {
  const attempts = context.receiveAttempts;
  for (let round = 0; round < maxRounds; round++) {
    const earlier = attempts.find(key);
    if (earlier === undefined) break;
    const messages = await earlier.answer.catch(() => undefined);
    // A long poll this retry shared that ended empty: the same answer, without a second wait.
    if (messages?.length === 0) return messages;
    if (messages !== undefined && attempts.leasesHeld(key, earlier)) {
      const leasesEndMs = await renewLeases(context, call, messages, earlier.leasesEndMs);
      // Settled while the renewal was on its way: that answer is no longer the caller's to repeat.
      if (leasesEndMs !== undefined && attempts.isCurrent(key, earlier)) {
        attempts.renewed(key, earlier, leasesEndMs);
        return messages;
      }
    }
    attempts.drop(key, earlier);
    // Another retry of this id may have made a new receive meanwhile: share it rather than lease a second batch.
    if (attempts.find(key) === undefined) break;
  }
  const answer = context.queues.call("receive", call).then(({ messages }) => messages);
  attempts.remember(key, answer);
  return answer;
}

/**
 * Renews every lease of `messages`, and returns when the first of them now
 * runs out; undefined if any was no longer held (a delete or a new receive
 * the endpoint did not see, e.g. over gRPC): that answer is then not
 * repeated, and the leases that were renewed run out in their time. A lease
 * at the queue's max_lease_duration is held on unrenewed until `heldUntilMs`.
 */
async function renewLeases(
  context: SqsActionContext,
  call: ReceiveCall,
  messages: readonly ReceivedMessage[],
  heldUntilMs: number,
): Promise<number | undefined> {
  const visibilityTimeout = call.visibilityTimeout ?? (await queueVisibilityTimeout(context, call.queue));
  const { results } = await context.queues.call("changeVisibilityBatch", {
    queue: call.queue,
    receiptHandles: messages.map((message) => message.receiptHandle),
    ...(visibilityTimeout === undefined ? {} : { visibilityTimeout }),
  });
  let leasesEndMs = Infinity;
  for (const result of results) {
    const end = leaseEnd(result, heldUntilMs);
    if (end === undefined) return undefined;
    leasesEndMs = Math.min(leasesEndMs, end);
  }
  return leasesEndMs;
}

/** When one renewed lease runs out; undefined if it is no longer held. */
function leaseEnd(result: EntryResult, heldUntilMs: number): number | undefined {
  if (result.code === 0 && result.leaseDeadline !== undefined) return timestampMs(result.leaseDeadline);
  // Refused only because it would outlast max_lease_duration: still held, as it was.
  if (result.reason === "LEASE_LIMIT_EXCEEDED") return heldUntilMs;
  return undefined;
}

/** The queue's default visibility timeout (GetQueue fills every default in). */
async function queueVisibilityTimeout(context: SqsActionContext, queue: string): Promise<Duration | undefined> {
  const answer = await context.queues.call("getQueue", { name: queue });
  return answer.queue?.config?.visibilityTimeout;
}
