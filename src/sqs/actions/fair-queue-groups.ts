import { brokerFailure } from "../../service/broker-failure.js";

/*
 * Since 2025, SQS takes a MessageGroupId on a standard queue too ("fair
 * queues": it spreads delivery across groups, keeping no order). holdshelf's
 * standard queues have no such fairness, and its gRPC API refuses a group on
 * them (NOT_A_FIFO_QUEUE), but an SQS client written for fair queues must
 * still be able to send: the endpoint drops the group. The first such send to
 * a queue is refused and sent again; from then on the endpoint knows the
 * queue is standard (queue-kinds.ts) and drops the group before sending. A
 * deduplication id on a standard queue stays refused, as SQS refuses it.
 */

/** Whether `error` is the broker refusing, at `field` ("message_group_id", "entries[2].message_group_id"), a group on a standard queue. */
export function isStandardQueueGroupRefusal(error: unknown, field: string): boolean {
  const failure = brokerFailure(error);
  return failure?.reason === "NOT_A_FIFO_QUEUE" && failure.violations[0]?.field === field;
}

/**
 * Whether `error` is the broker asking, at `field`, for the group a send
 * left out: the send dropped it for a queue known as standard, and the name
 * has been made again as a FIFO queue since.
 */
export function isGroupRequiredRefusal(error: unknown, field: string): boolean {
  const failure = brokerFailure(error);
  return failure?.reason === "MESSAGE_GROUP_ID_REQUIRED" && failure.violations[0]?.field === field;
}
