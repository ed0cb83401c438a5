import { brokerFailure } from "../../service/broker-failure.js";

/*
 * Since 2025, SQS takes a MessageGroupId on a standard queue too ("fair
 * queues": it spreads delivery across groups, keeping no order). holdshelf's
 * standard queues have no such fairness, and its gRPC API refuses a group on
 * them (NOT_A_FIFO_QUEUE), but an SQS client written for fair queues must
 * still be able to send: the endpoint drops the group and sends again. Only a
 * refused send pays for this; a deduplication id on a standard queue stays
 * refused, as SQS refuses it.
 */

/** Whether `error` is the broker refusing, at `field` ("message_group_id", "entries[2].message_group_id"), a group on a standard queue. */
export function isStandardQueueGroupRefusal(error: unknown, field: string): boolean {
  const failure = brokerFailure(error);
  return failure?.reason === "NOT_A_FIFO_QUEUE" && failure.violations[0]?.field === field;
}
