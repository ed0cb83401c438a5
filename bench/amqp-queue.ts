/** The RabbitMQ queues the peer scenarios run through: declared, and read for what is left in them. */
import { connect } from "amqplib";

/** Declares a durable quorum queue (replicated by Raft; on one node, one replica). */
export async function declareQuorumQueue(url: string, queue: string): Promise<void> {
  const model = await connect(url);
  try {
    const channel = await model.createChannel();
    await channel.assertQueue(queue, { durable: true, arguments: { "x-queue-type": "quorum" } });
  } finally {
    await model.close();
  }
}

/** Messages ready in a queue: 0 once every message has been acked (unacked ones return to it when their channel closes). */
export async function queuedMessages(url: string, queue: string): Promise<number> {
  const model = await connect(url);
  try {
    return (await (await model.createChannel()).checkQueue(queue)).messageCount;
  } finally {
    await model.close();
  }
}
