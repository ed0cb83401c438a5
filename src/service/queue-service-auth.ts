import type { Metadata } from "@grpc/grpc-js";
import type { Queue } from "../../gen/holdshelf/v1/queue_pb.js";
import type { QueueService, UpdateQueueRequest } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { requirePermission, type AuthGate } from "../auth/auth-gate.js";
import type { Action, Principal } from "../auth/permissions.js";
import { parseMoveTaskHandle } from "../protocol/move-task-handle.js";
import type { CallContext } from "./call-context.js";
import type { UnaryHandlers } from "./unary-handlers.js";

type Handlers = UnaryHandlers<typeof QueueService>;

/** A permission a call needs: an action (or, for "see", any action) on the queue a request field names. */
interface Need {
  readonly action: Action | "see";
  readonly queue: string;
  readonly field: string;
}

/**
 * What each unary RPC needs, read from its request. A queue config naming a
 * dead-letter queue needs admin on that queue too: it would send messages
 * there, and whether it exists would answer differently. ListQueues needs
 * nothing: it shows only the queues the caller holds a permission on.
 */
const needs: { [K in keyof Handlers]: (request: Parameters<Handlers[K]>[0]) => Need[] } = {
  createQueue: (r) => [admin(r.name, "name"), ...deadLetterQueueOf(r.config)],
  // A mask that leaves redrive_policy out keeps the policy there is: no dead-letter queue is chosen.
  updateQueue: (r) => [admin(r.name, "name"), ...(changesRedrivePolicy(r) ? deadLetterQueueOf(r.config) : [])],
  deleteQueue: (r) => [admin(r.name, "name")],
  purgeQueue: (r) => [admin(r.name, "name")],
  // Without a destination, messages go back to the queues that dead-lettered
  // them: queues whose admins chose this dead-letter queue.
  redriveMessages: (r) => [
    admin(r.deadLetterQueue, "dead_letter_queue"),
    ...(r.destinationQueue === "" ? [] : [admin(r.destinationQueue, "destination_queue")]),
  ],
  // A move task is a redrive: the same permissions start it. Listing and
  // cancelling need admin on the source too (as SQS asks the same of all
  // three): a list names destinations, a cancel stops an admin's work.
  startMessageMoveTask: (r) => [
    admin(r.sourceQueue, "source_queue"),
    ...(r.destinationQueue === "" ? [] : [admin(r.destinationQueue, "destination_queue")]),
  ],
  listMessageMoveTasks: (r) => [admin(r.sourceQueue, "source_queue")],
  // Admin, not receive: a peek shows every message, in flight ones and their dead-letter origins included.
  peekMessages: (r) => [admin(r.queue, "queue")],
  // Admin, not receive: these take any message, one in flight included. A
  // move is a redrive of one message: the same permissions as a move task's.
  discardMessage: (r) => [admin(r.queue, "queue")],
  moveMessage: (r) => [
    admin(r.queue, "queue"),
    ...(r.destinationQueue === "" ? [] : [admin(r.destinationQueue, "destination_queue")]),
  ],
  // A malformed handle names no queue: only a caller with admin on every queue gets to hear INVALID_ARGUMENT.
  cancelMessageMoveTask: (r) => [admin(parseMoveTaskHandle(r.taskHandle)?.sourceQueue ?? "", "task_handle")],
  getQueue: (r) => [{ action: "see", queue: r.name, field: "name" }],
  listQueues: () => [],
  send: (r) => [{ action: "send", queue: r.queue, field: "queue" }],
  sendBatch: (r) => [{ action: "send", queue: r.queue, field: "queue" }],
  receive: (r) => [receive(r.queue)],
  delete: (r) => [receive(r.queue)],
  deleteBatch: (r) => [receive(r.queue)],
  changeVisibility: (r) => [receive(r.queue)],
  changeVisibilityBatch: (r) => [receive(r.queue)],
};

/**
 * Wraps QueueService's handlers so that each call proves its permissions
 * (PERMISSION_DENIED) before any queue is looked up, so a refusal never
 * tells whether a queue exists. `identify` names the caller of a call, or
 * throws if it cannot: a gRPC call's bearer token (tokenCaller), or the
 * principal the SQS endpoint's signature check put in the context.
 */
export function authorizeQueueService(handlers: Handlers, identify: (context: CallContext) => Principal): Handlers {
  const guarded: Record<string, unknown> = {};
  for (const [method, handler] of Object.entries(handlers) as [keyof Handlers, Handlers[keyof Handlers]][]) {
    const needOf = needs[method] as (request: unknown) => Need[];
    const run = handler as (request: unknown, signal: AbortSignal, context: CallContext) => Promise<object>;
    guarded[method] = async (request: unknown, signal: AbortSignal, context: CallContext) => {
      const principal = identify(context);
      for (const need of needOf(request)) requirePermission(principal, need.action, need.queue, need.field);
      const canSee = (queue: string): boolean => principal.canSee(queue);
      // The caller goes on with the call, for the handlers that log who acted (DiscardMessage, MoveMessage).
      return hideUnseenQueues(await run(request, signal, { ...context, canSee, caller: principal }), canSee);
    };
  }
  return guarded as Handlers;
}

/**
 * The caller of a gRPC call by its bearer token. The token check interceptor
 * has refused calls without a valid token already; the token is looked up
 * again here for its principal.
 */
export function tokenCaller(gate: AuthGate): (context: CallContext) => Principal {
  return (context) => gate.authenticate(context.metadata).principal;
}

/**
 * Authenticates a Heartbeat or Subscribe stream as it opens (throws
 * UNAUTHENTICATED) and returns the check for each of its requests: receive on the request's queue,
 * by the auth file current at that request, so a token revoked by a reload
 * stops renewing leases on the streams it opened. The receipt handles are
 * bound to that queue already (a handle of another queue is refused).
 */
export function authorizeStream(gate: AuthGate, metadata: Metadata): (queue: string) => void {
  const { digest } = gate.authenticate(metadata);
  return (queue) => requirePermission(gate.identify(digest).principal, "receive", queue, "queue");
}

function admin(queue: string, field: string): Need {
  return { action: "admin", queue, field };
}

function receive(queue: string): Need {
  return { action: "receive", queue, field: "queue" };
}

function deadLetterQueueOf(config: { redrivePolicy?: { deadLetterQueue: string } | undefined } | undefined): Need[] {
  const target = config?.redrivePolicy?.deadLetterQueue;
  return target === undefined || target === "" ? [] : [admin(target, "config.redrive_policy.dead_letter_queue")];
}

/** Whether an UpdateQueue sets the redrive policy: without a mask (or with "*") it sets every field. */
function changesRedrivePolicy(request: UpdateQueueRequest): boolean {
  const paths = request.updateMask?.paths ?? [];
  return paths.length === 0 || paths.includes("*") || paths.includes("redrive_policy");
}

/** Drops from a response's queues the names of dead-letter sources the caller may not see. */
function hideUnseenQueues<T extends object>(response: T, canSee: (queue: string) => boolean): T {
  const queues: Queue[] = [];
  if ("queue" in response && response.queue !== undefined) queues.push(response.queue as Queue);
  if ("queues" in response) queues.push(...(response.queues as Queue[]));
  for (const queue of queues) queue.deadLetterSourceQueues = queue.deadLetterSourceQueues.filter(canSee);
  return response;
}
