// The TypeScript conformance worker (test/conformance/worker-protocol.md):
// a worker written on the package's QueueClient and Consumer as a user would
// write one. Runs on the compiled package (npm run build).
import { parseArgs } from "node:util";
import { Consumer, QueueClient, RetryLater, stopOnSignals } from "../../../dist/src/index.js";

const { values } = parseArgs({
  options: {
    address: { type: "string" },
    queue: { type: "string" },
    concurrency: { type: "string", default: "1" },
    "visibility-timeout": { type: "string" },
    "stop-grace": { type: "string", default: "10" },
    "wait-time": { type: "string", default: "1" },
    mode: { type: "string", default: "subscribe" },
  },
});
if (values.mode !== "subscribe" && values.mode !== "receive") {
  process.stderr.write(`--mode must be subscribe or receive, not ${values.mode}\n`);
  process.exit(2);
}
const seconds = (text) => Math.round(Number(text) * 1000);
const print = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

const client = new QueueClient(values.address);
let active = 0;

async function handle(message, context) {
  const job = {
    steps: 0,
    stepMs: 0,
    checkpoint: true,
    failTimes: 0,
    failure: "raise",
    retrySeconds: 0,
    ...JSON.parse(Buffer.from(message.body).toString()),
  };
  const id = message.messageId;
  const saved = message.checkpoint === undefined ? null : Buffer.from(message.checkpoint).toString();
  active++;
  try {
    print({
      event: "received",
      id,
      receiveCount: message.receiveCount,
      receiptHandle: message.receiptHandle,
      checkpoint: saved,
      active,
    });
    for (let step = saved === null ? 0 : Number(saved) + 1; step < job.steps; step++) {
      await pause(job.stepMs, context.signal);
      if (context.signal.aborted) {
        print({ event: "cancelled", id });
        throw context.signal.reason;
      }
      if (job.checkpoint) {
        await context.checkpoint(Buffer.from(String(step)));
        print({ event: "checkpoint", id, step });
      }
    }
    if (message.receiveCount <= job.failTimes) {
      if (job.failure === "retryLater") {
        print({ event: "retrying", id });
        throw new RetryLater(job.retrySeconds * 1000);
      }
      print({ event: "raised", id });
      throw new Error(`job ${id} failed on purpose`);
    }
    print({ event: "finished", id });
  } finally {
    active--;
  }
}

/** Waits ms, waking at once if the signal aborts. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

const consumer = new Consumer(client, values.queue, handle, {
  concurrency: Number(values.concurrency),
  // receive: the fallback path a broker without Subscribe gets.
  subscribe: values.mode === "subscribe",
  visibilityTimeoutMs: values["visibility-timeout"] === undefined ? undefined : seconds(values["visibility-timeout"]),
  stopGraceMs: seconds(values["stop-grace"]),
  waitTimeMs: seconds(values["wait-time"]),
  onError: (error) => process.stderr.write(`consumer: ${error?.stack ?? error}\n`),
});
print({ event: "started" });
await stopOnSignals(consumer);
client.close();
print({ event: "stopped" });
