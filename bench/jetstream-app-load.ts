/**
 * The app-shaped load through NATS JetStream, as a service would use it:
 * producers share one connection, each publishing one message at a time and
 * awaiting its PubAck (the server has stored it); one consumer, on a
 * connection of its own, takes messages from a durable pull consumer whose
 * max_ack_pending is the load's concurrency and acks each with ackAck, which
 * waits for the server to confirm it, as scenario 7 does.
 */
import { AckPolicy, connect, nanos, RetentionPolicy, StorageType, type NatsConnection } from "nats";
import { countArrivals, runProducers, type AppLoadOptions, type AppLoadOutcome } from "./app-load.js";
import { ageOf, timedBody } from "./message-bodies.js";

const subjectSuffix = ".work";
const durable = "app-workers";

/**
 * Creates the work-queue stream `stream` on file storage (its subject is the
 * stream's name in lower case, then ".work"), and its one durable pull
 * consumer with at most `concurrency` messages unacked. A stream of that
 * name is replaced.
 */
export async function createAppStream(url: string, stream: string, concurrency: number): Promise<void> {
  await withConnection(url, async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(stream).catch(() => false);
    await jsm.streams.add({
      name: stream,
      subjects: [subjectOf(stream)],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: 1,
    });
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      // Long enough that nothing is redelivered in a healthy run.
      ack_wait: nanos(60_000),
      // As RabbitMQ's prefetch and the Consumer's concurrency: the messages the consumer holds at once.
      max_ack_pending: concurrency,
    });
  });
}

/**
 * Publishes and consumes `messages` messages through `options.queue` (a
 * stream createAppStream made), and returns every message's latency: from
 * just before its publish to its arrival at the consumer (the handler's
 * start). Resolves once every ack is confirmed.
 */
export async function runJetStreamAppLoad(url: string, options: AppLoadOptions): Promise<AppLoadOutcome> {
  const stream = options.queue;
  // Without async traces the client makes no Error per request for its stack: less client CPU.
  const publishing = await connect({ servers: url, noAsyncTraces: true });
  const consuming = await connect({ servers: url, noAsyncTraces: true }).catch(async (error: unknown) => {
    await publishing.close();
    throw error;
  });
  try {
    const arrivals = countArrivals(options.messages);
    const consumer = await consuming.jetstream().consumers.get(stream, durable);
    const delivered = await consumer.consume({ max_messages: options.concurrency });
    const acks: Promise<boolean>[] = [];
    const consume = (async () => {
      for await (const message of delivered) {
        arrivals.arrived(ageOf(message.data), message.redelivered);
        acks.push(message.ackAck());
      }
    })();
    const js = publishing.jetstream();
    const subject = subjectOf(stream);
    await runProducers(options, () => js.publish(subject, timedBody()));
    await arrivals.all;
    await delivered.close();
    await consume;
    if ((await Promise.all(acks)).includes(false)) throw new Error("JetStream did not confirm an ack");
    return arrivals.outcome();
  } finally {
    await Promise.all([publishing.close(), consuming.close()]);
  }
}

/** Messages still in the stream: 0 once every message has been acked. */
export async function appStreamMessages(url: string, stream: string): Promise<number> {
  return withConnection(url, async (nc) => (await (await nc.jetstreamManager()).streams.info(stream)).state.messages);
}

function subjectOf(stream: string): string {
  return `${stream.toLowerCase()}${subjectSuffix}`;
}

async function withConnection<T>(url: string, work: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url });
  try {
    return await work(nc);
  } finally {
    await nc.close();
  }
}
