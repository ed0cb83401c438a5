import { timestampMs, type Duration } from "@bufbuild/protobuf/wkt";
import type { ReceivedMessage } from "../../../gen/holdshelf/v1/message_pb.js";
import type { SqsActionContext } from "./action-context.js";
import type { AttemptKey } from "./receive-attempts.js";

/** What ReceiveMessage asks the broker for. */
export interface ReceiveCall {
  readonly queue: string;
  readonly maxMessages: number;
  readonly visibilityTimeout?: Duration;
  readonly waitTime?: Duration;
}

/**
 * A ReceiveMessage that names a ReceiveRequestAttemptId. If the same caller
 * received on this queue under this id within five minutes, none of that
 * answer's leases has run out, and none of its messages was deleted or had
 * its visibility changed through this endpoint since, the leases are renewed
 * for the visibility timeout (the request's, else the queue's) and that
 * answer is returned again, receipt handles included. Otherwise it is a new
 * receive, remembered under the id. A retry that arrives while the first
 * receive still waits (a long poll) shares its answer.
 */
export async function receiveWithAttempt(context: SqsActionContext, key: AttemptKey, call: ReceiveCall): Promise<readonly ReceivedMessage[]> {
  const attempts = context.receiveAttempts;
  const earlier = attempts.find(key);
  if (earlier !== undefined) {
    const messages = await earlier.catch(() => []);
    if (messages.length > 0 && attempts.leasesHeld(key, earlier)) {
      const leasesEndMs = await renewLeases(context, call, messages);
      if (leasesEndMs !== undefined) {
        attempts.renewed(key, earlier, leasesEndMs);
        return messages;
      }
    }
    attempts.drop(key, earlier);
  }
  const answer = context.queues.call("receive", call).then(({ messages }) => messages);
  attempts.remember(key, answer);
  return answer;
}

/**
 * Renews every lease of `messages`, and returns when the first of them now
 * runs out; undefined if any was no longer held (a delete or a new receive
 * the endpoint did not see, e.g. over gRPC): that answer is then not
 * repeated, and the leases that were renewed run out in their time.
 */
async function renewLeases(context: SqsActionContext, call: ReceiveCall, messages: readonly ReceivedMessage[]): Promise<number | undefined> {
  const visibilityTimeout = call.visibilityTimeout ?? (await queueVisibilityTimeout(context, call.queue));
  const { results } = await context.queues.call("changeVisibilityBatch", {
    queue: call.queue,
    receiptHandles: messages.map((message) => message.receiptHandle),
    ...(visibilityTimeout === undefined ? {} : { visibilityTimeout }),
  });
  if (!results.every((result) => result.code === 0 && result.leaseDeadline !== undefined)) return undefined;
  return Math.min(...results.map((result) => timestampMs(result.leaseDeadline!)));
}

/** The queue's default visibility timeout (GetQueue fills every default in). */
async function queueVisibilityTimeout(context: SqsActionContext, queue: string): Promise<Duration | undefined> {
  const answer = await context.queues.call("getQueue", { name: queue });
  return answer.queue?.config?.visibilityTimeout;
}
