/**
 * Scenario 7, the peer comparison: scenario 1's workload against NATS
 * JetStream on the same machine in the same run, and holdshelf's rate divided
 * by JetStream's.
 *
 * JetStream runs as a nats-server child process with file storage, a
 * work-queue stream and one durable pull consumer with explicit acks. Like
 * scenario 1, 4 producers and 4 consumers run concurrently, each on a
 * connection of its own, moving 1 KiB timed bodies:
 * - JetStream has no batch publish, so a producer's "batch" is 100 publishes
 *   in flight at once, each awaited for its PubAck (the server has stored it).
 * - A consumer fetches up to 100 messages, then acks each with ackAck, which
 *   waits for the server to confirm the ack, as DeleteBatch waits for its
 *   write; it fetches again once all 100 are confirmed.
 * Latency is from just before the publish to the message's arrival in the fetch.
 *
 * Durability differs, and each row says which JetStream had: nats-server's
 * file store does not fsync per write by default (it leaves writes in the OS
 * page cache and forces a sync every 2 minutes), while holdshelf fsyncs every
 * group commit unless --durability os. `sync_interval: always` (fsync every
 * write) exists only from nats-server 2.10; where the server accepts it, a
 * second row runs with it.
 *
 * Skipped, with one row saying why, where nats-server is not installed.
 */
import {
  AckPolicy,
  connect,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type NatsConnection,
} from "nats";
import { ageOf, timedBody } from "../message-bodies.js";
import {
  findNatsServer,
  natsConfigProblem,
  natsServerVersion,
  startNatsServer,
  writeNatsConfig,
  type NatsServerChild,
  type NatsSync,
} from "../nats-server-child.js";
import { holdshelfRate } from "../holdshelf-rate.js";
import { measurePeer, peerRow } from "../peer-row.js";
import { skippedRow, type Scenario, type ScenarioContext, type ScenarioResult } from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const warmupMessages = 5_000;
const stream = "BENCH";
const subject = "bench.work";
const durable = "bench-workers";
const targetRatio = 2;

/** The shape of a JetStream load: scenario 1's. */
interface JetStreamPipelineOptions {
  readonly messages: number;
  readonly producers: number;
  readonly consumers: number;
  readonly batch: number;
}

/** What a JetStream run delivered besides latencies: checks that it moved each message once. */
interface JetStreamPipelineOutcome {
  readonly latencies: number[];
  readonly redelivered: number;
}

export const natsPeer: Scenario = {
  name: "peer",
  sizeMeaning: "messages moved end to end, in each system",
  defaultSize: 200_000,
  async run(context) {
    const bin = await findNatsServer();
    if (bin === undefined) {
      context.log("peer: skipped, nats-server is not installed");
      return [skippedRow("7 JetStream peer", "nats-server is not installed (Debian: apt-get install nats-server)")];
    }
    const version = await natsServerVersion(bin);
    const holdshelf = await holdshelfRate(context, "peer");
    const messages = context.size ?? this.defaultSize;

    const rows: ScenarioResult[] = [];
    const configDir = await context.tempDir();
    const unsupported: string[] = [];
    for (const sync of ["default", "always"] as const) {
      const storeDir = await context.tempDir();
      const configFile = await writeNatsConfig(configDir, storeDir, sync);
      const problem = await natsConfigProblem(bin, configFile);
      if (problem !== undefined) {
        context.log(`peer: nats-server ${version} has no ${syncLabel(sync)} durability: ${problem}`);
        unsupported.push(`${syncLabel(sync)}: not in nats-server ${version} (${problem})`);
        continue;
      }
      const server = await startNatsServer(bin, configFile);
      try {
        rows.push(await measureJetStream(context, server, sync, messages, version, holdshelf));
      } finally {
        await server.stop();
      }
    }
    // Say on every row what could not be run, so that the missing like-for-like row is explained.
    return rows.map((row) =>
      unsupported.length === 0 ? row : { ...row, extra: { ...row.extra, notRun: unsupported.join("; ") } },
    );
  },
};

/** One JetStream row: a warm-up, then the measured pipeline, on a fresh stream. */
async function measureJetStream(
  context: ScenarioContext,
  server: NatsServerChild,
  sync: NatsSync,
  messages: number,
  version: string,
  holdshelf: { rate: number; source: string },
): Promise<ScenarioResult> {
  const label = syncLabel(sync);
  await createStream(server.url);
  context.log(`peer: JetStream ${version} (file, ${label}): warm-up of ${warmupMessages} messages`);
  await runJetStreamPipeline(server.url, { messages: warmupMessages, ...batchedPipelineShape });
  // The warm-up's consumers leave pull requests waiting on the server until they
  // expire; a new consumer keeps them from swallowing measured messages.
  await recreateConsumer(server.url);
  context.log(
    `peer: JetStream (file, ${label}): ${messages} messages, ${batchedPipelineShape.producers} producers and ${batchedPipelineShape.consumers} consumers`,
  );

  // The nats client does more per message than holdshelf's (a request per publish and
  // per ack): its CPU tells whether this process, not the server, set the pace.
  const window = await measurePeer(server.pid, () =>
    runJetStreamPipeline(server.url, { messages, ...batchedPipelineShape }),
  );
  const { outcome } = window;
  const leftInStream = await streamMessages(server.url);
  if (outcome.redelivered > 0 || leftInStream > 0) {
    context.log(`peer: JetStream redelivered ${outcome.redelivered} messages and left ${leftInStream} in the stream`);
  }
  return peerRow(window, {
    scenario: `7 JetStream (file, ${label})`,
    peer: "JetStream",
    messages,
    latencies: outcome.latencies,
    holdshelf,
    holdshelfDurability: context.durability,
    targetRatio,
    extra: {
      jetStreamDurability: sync === "always" ? "fsync on every write" : "OS page cache, forced sync every 2 minutes",
      acks: "ackAck (server-confirmed)",
      nats: `nats-server ${version}`,
      ...(outcome.redelivered > 0 ? { redelivered: outcome.redelivered } : {}),
      ...(leftInStream > 0 ? { leftInStream } : {}),
    },
  });
}

/**
 * Publishes and consumes `messages` messages concurrently through the stream,
 * each producer and consumer on a connection of its own, and returns every
 * message's latency.
 */
async function runJetStreamPipeline(url: string, options: JetStreamPipelineOptions): Promise<JetStreamPipelineOutcome> {
  const connections: NatsConnection[] = [];
  const connection = async (): Promise<NatsConnection> => {
    // Without async traces the client makes no Error per request for its stack: less client CPU.
    const nc = await connect({ servers: url, noAsyncTraces: true });
    connections.push(nc);
    return nc;
  };
  const { messages, batch } = options;
  const latencies: number[] = [];
  let redelivered = 0;
  let claimed = 0;
  // Fetches waiting on the server; stopped once every message has arrived, so
  // that no consumer waits out its fetch's expiry at the end.
  const fetching = new Set<ConsumerMessages>();

  const produce = async (nc: NatsConnection): Promise<void> => {
    const js = nc.jetstream();
    while (claimed < messages) {
      const count = Math.min(batch, messages - claimed);
      claimed += count;
      await Promise.all(Array.from({ length: count }, () => js.publish(subject, timedBody())));
    }
  };
  const consume = async (nc: NatsConnection): Promise<void> => {
    const consumer = await nc.jetstream().consumers.get(stream, durable);
    while (latencies.length < messages) {
      // expires: 1 s, the client's minimum, as scenario 1 long-polls for 1 s.
      const fetched = await consumer.fetch({ max_messages: batch, expires: 1000 });
      fetching.add(fetched);
      // The last message may have come to another consumer while this fetch started.
      if (latencies.length >= messages) fetched.stop();
      const acks: Promise<boolean>[] = [];
      for await (const message of fetched) {
        latencies.push(ageOf(message.data));
        if (message.redelivered) redelivered++;
        acks.push(message.ackAck());
        if (latencies.length >= messages) for (const other of fetching) other.stop();
      }
      fetching.delete(fetched);
      const confirmed = await Promise.all(acks);
      if (confirmed.includes(false)) throw new Error("JetStream did not confirm an ack");
    }
  };

  try {
    const producers = await Promise.all(Array.from({ length: options.producers }, connection));
    const consumers = await Promise.all(Array.from({ length: options.consumers }, connection));
    await Promise.all([...producers.map(produce), ...consumers.map(consume)]);
  } finally {
    await Promise.all(connections.map((nc) => nc.close()));
  }
  return { latencies, redelivered };
}

/** Creates the work-queue stream on file storage, and its durable pull consumer. */
async function createStream(url: string): Promise<void> {
  await withManager(url, async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: stream,
      subjects: [subject],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: 1,
    });
    await addConsumer(nc);
  });
}

/** Deletes the durable consumer and adds it again. */
async function recreateConsumer(url: string): Promise<void> {
  await withManager(url, async (nc) => {
    await (await nc.jetstreamManager()).consumers.delete(stream, durable);
    await addConsumer(nc);
  });
}

/**
 * One durable pull consumer shared by every consumer loop: a work-queue stream
 * allows only one consumer per subject, and sharing it is how JetStream spreads
 * work, as consumers of one holdshelf queue share it.
 */
async function addConsumer(nc: NatsConnection): Promise<void> {
  await (await nc.jetstreamManager()).consumers.add(stream, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    // As scenario 1's 60 s visibility timeout: nothing is redelivered in a healthy run.
    ack_wait: nanos(60_000),
    // holdshelf does not limit messages in flight; the default (1,000) would not bind here either.
    max_ack_pending: 10_000,
  });
}

/** Messages still in the stream: 0 once every message has been acked. */
async function streamMessages(url: string): Promise<number> {
  return withManager(url, async (nc) => (await (await nc.jetstreamManager()).streams.info(stream)).state.messages);
}

async function withManager<T>(url: string, work: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url });
  try {
    return await work(nc);
  } finally {
    await nc.close();
  }
}

function syncLabel(sync: NatsSync): string {
  return sync === "always" ? "fsync" : "os";
}
