import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { QueueConfigInput } from "../../src/client/types.js";
import type { JsonLinesProcess } from "../support/json-lines-process.js";
import { skipWithout } from "../support/required-tools.js";
import { inCluster } from "../support/test-storage.js";
import { text } from "../support/text.js";
import { startConformanceBroker, type ConformanceBroker } from "./conformance-broker.js";

/** The repository's root, with a trailing slash. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** Starts one conformance worker process (test/conformance/worker-protocol.md) with these arguments. */
export type StartWorker = (args: string[]) => JsonLinesProcess;

/** One language's Consumer as the suite runs it. */
export interface ConsumerLanguage {
  readonly name: string;
  /** Tools it needs that this machine lacks: the suite then skips locally and fails in CI. */
  readonly missingTools: readonly string[];
  /** Builds or installs the worker; returns how to start one, and how to clean up after. */
  prepare(): Promise<{ start: StartWorker; dispose(): Promise<void> }>;
}

/** A job as the conformance workers read it from a message body. */
interface Job {
  steps?: number;
  stepMs?: number;
  checkpoint?: boolean;
  failTimes?: number;
  failure?: "raise" | "retryLater";
  retrySeconds?: number;
}

interface WorkerOptions {
  concurrency?: number;
  stopGraceSeconds?: number;
}

/** A worker's path (its --mode): the Subscribe stream, or the Receive fallback (Receive and Heartbeat). */
export type ConsumerMode = "subscribe" | "receive";

// Every scenario runs on both paths on LevelDB; the cluster run, the slower
// one, runs the default path only (the fallback's calls are forwarded there
// as they always were, and the LevelDB run covers its behaviour).
const modes: readonly { readonly mode: ConsumerMode }[] = inCluster
  ? [{ mode: "subscribe" }]
  : [{ mode: "subscribe" }, { mode: "receive" }];

/**
 * The consumer conformance suite: the same scenarios for every language's
 * Consumer, each worker a real process on a real broker. Margins: a handover
 * within 1 s (the bound), lower bounds on waits a little under the
 * waits asked for (an event is seen a few ms after the worker printed it),
 * upper bounds several seconds wide for a loaded 2-core machine.
 */
export function describeConsumerConformance(language: ConsumerLanguage): void {
  describe.skipIf(skipWithout(language.missingTools))(`the ${language.name} Consumer`, () => {
    let broker: ConformanceBroker;
    let prepared: Awaited<ReturnType<ConsumerLanguage["prepare"]>>;
    const workers: JsonLinesProcess[] = [];
    let queues = 0;

    beforeAll(async () => {
      expect(language.missingTools, `${language.name}: toolchain missing (Debian packages: see .ci/run)`).toEqual([]);
      prepared = await language.prepare();
      broker = await startConformanceBroker();
    }, 300_000);
    afterEach(async () => {
      for (const running of workers.splice(0)) {
        if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill("SIGKILL");
        await running.exited();
      }
    });
    afterAll(async () => {
      await broker?.stop();
      await prepared?.dispose();
    });

    describe.each(modes)("on the $mode path", ({ mode }) => {
      const startWorker = (queue: string, options: WorkerOptions = {}): JsonLinesProcess => {
        const args = ["--address", broker.address, "--queue", queue, "--concurrency", String(options.concurrency ?? 1)];
        args.push("--mode", mode);
        if (options.stopGraceSeconds !== undefined) args.push("--stop-grace", String(options.stopGraceSeconds));
        const worker = prepared.start(args);
        workers.push(worker);
        return worker;
      };
      const newQueue = async (config: QueueConfigInput): Promise<string> => {
        const name = `${language.name.toLowerCase()}-${mode}-${++queues}`;
        await broker.createQueue(name, config);
        return name;
      };
      const sendJob = (queue: string, job: Job): Promise<string> => broker.client.send(queue, JSON.stringify(job));
      const eventsOf = (worker: JsonLinesProcess, event: string, id?: string) =>
        worker.events.filter((e) => e.event === event && (id === undefined || e.id === id));
      const emptied = (queue: string) =>
        vi.waitFor(() => expect(broker.counts(queue)).toEqual({ visible: 0, inFlight: 0, delayed: 0 }), {
          timeout: 5000,
          interval: 20,
        });
      /** Records the most messages the queue ever had in flight, and whether one was ever visible, until stopped. */
      const watch = (queue: string) => {
        let maxInFlight = 0;
        let everVisible = false;
        const timer = setInterval(() => {
          const counts = broker.counts(queue);
          maxInFlight = Math.max(maxInFlight, counts.inFlight);
          everVisible ||= counts.visible > 0;
        }, 20);
        // No scenario that watches moves its queue between brokers, so a read never fails for want of an owner.
        return {
          stop: () => {
            clearInterval(timer);
            return { maxInFlight, everVisible };
          },
        };
      };

      it("deletes a message whose handler returns", async () => {
        const queue = await newQueue({ visibilityTimeoutMs: 5000 });
        const id = await sendJob(queue, {});
        const worker = startWorker(queue);
        await worker.waitFor((e) => e.event === "finished" && e.id === id);
        await emptied(queue);
        expect(eventsOf(worker, "received")).toHaveLength(1);
      });

      it("brings a message whose handler raises back after the queue's retry backoff", async () => {
        const queue = await newQueue({
          visibilityTimeoutMs: 30_000,
          retryPolicy: { minBackoffMs: 1500, maxBackoffMs: 1500 },
        });
        const id = await sendJob(queue, { failTimes: 1 });
        const worker = startWorker(queue);
        await worker.waitFor((e) => e.event === "raised" && e.id === id);
        const raisedAt = performance.now();
        // Waiting out its backoff, not held by a lease (a 30 s one would mean the release never came).
        await vi.waitFor(() => expect(broker.counts(queue)).toEqual({ visible: 0, inFlight: 0, delayed: 1 }), {
          timeout: 1000,
          interval: 10,
        });
        const again = await worker.waitFor((e) => e.event === "received" && e.receiveCount === 2, 10_000);
        expect(performance.now() - raisedAt, "waited the backoff").toBeGreaterThanOrEqual(1300);
        expect(again.id).toBe(id);
        await worker.waitFor((e) => e.event === "finished" && e.id === id);
        await emptied(queue);
      });

      it("hands the job of a worker killed with SIGKILL to another within a second, with its checkpoint", async () => {
        const queue = await newQueue({ visibilityTimeoutMs: 30_000 });
        const id = await sendJob(queue, { steps: 100, stepMs: 100 });
        const first = startWorker(queue);
        await first.waitFor((e) => e.event === "checkpoint" && (e.step as number) >= 2, 15_000);
        // The second worker waits for messages (its Subscribe stream open, or its Receive
        // long-polling) before the kill, so the timing measures the hand-over.
        const listeningBefore = broker.listening();
        const second = startWorker(queue);
        await second.waitFor((e) => e.event === "started");
        await vi.waitFor(() => expect(broker.listening()).toBeGreaterThan(listeningBefore), {
          timeout: 10_000,
          interval: 10,
        });

        first.child.kill("SIGKILL");
        const killedAt = performance.now();
        await first.exited();
        const lastReported = Math.max(...eventsOf(first, "checkpoint").map((e) => e.step as number));
        const received = await second.waitFor((e) => e.event === "received", 5000);
        expect(performance.now() - killedAt, "hand-over time").toBeLessThan(1000);
        expect(received).toMatchObject({ id, receiveCount: 2 });
        // The kill may land after a checkpoint was stored but before the worker printed it.
        const checkpoint = Number(received.checkpoint);
        expect([lastReported, lastReported + 1]).toContain(checkpoint);
        const resumed = await second.waitFor((e) => e.event === "checkpoint");
        expect(resumed.step).toBe(checkpoint + 1);
      });

      // A release by someone else alone takes nothing away: by the documented
      // rule (ChangeVisibility in proto/), the holder's next renewal hides a
      // message nobody received since. It is lost once another consumer takes
      // it (a superseding delivery) or it is deleted.
      it.each([
        { how: "superseded by another delivery after someone else's ChangeVisibility 0", taken: "superseded" },
        { how: "deleted by someone else", taken: "deleted" },
      ])("cancels a running handler whose lease was $how", async ({ taken }) => {
        // Renewed about every second: the one after the loss tells the worker.
        const queue = await newQueue({ visibilityTimeoutMs: 3000 });
        const id = await sendJob(queue, { steps: 300, stepMs: 100, checkpoint: false });
        const worker = startWorker(queue);
        const received = await worker.waitFor((e) => e.event === "received" && e.id === id);
        const handle = received.receiptHandle as string;
        if (taken === "superseded") {
          // The renewal that names the lease at receive may land after the
          // release and hide the message again: release and receive until
          // ours. On Subscribe the worker's own stream, pushed to the moment
          // the message is visible, may take it first: that delivery
          // supersedes the lease as well, and the release then says so.
          await vi.waitFor(
            async () => {
              try {
                await broker.client.changeVisibility(queue, handle, 0);
              } catch (error) {
                if ((error as { reason?: string }).reason === "LEASE_SUPERSEDED") return;
                throw error;
              }
              const [again] = await broker.client.receive(queue, { visibilityTimeoutMs: 30_000 });
              expect(again?.messageId).toBe(id);
            },
            { timeout: 5000, interval: 50 },
          );
        } else {
          await broker.client.delete(queue, handle);
        }
        await worker.waitFor((e) => e.event === "cancelled" && e.id === id, 5000);
        expect(eventsOf(worker, "finished")).toEqual([]);
      });

      it("on stop, lets a handler that finishes within the grace period finish and delete", async () => {
        const queue = await newQueue({ visibilityTimeoutMs: 10_000 });
        const id = await sendJob(queue, { steps: 10, stepMs: 100, checkpoint: false });
        const worker = startWorker(queue, { stopGraceSeconds: 10 });
        await worker.waitFor((e) => e.event === "received" && e.id === id);
        worker.child.kill("SIGTERM");
        await worker.waitFor((e) => e.event === "stopped", 15_000);
        expect(await worker.exited(), worker.stderr()).toBe(0);
        expect(eventsOf(worker, "finished", id)).toHaveLength(1);
        expect(eventsOf(worker, "cancelled")).toEqual([]);
        await emptied(queue);
      });

      it("on stop, releases a handler's message at once when the grace period runs out, with its checkpoint", async () => {
        const queue = await newQueue({
          visibilityTimeoutMs: 30_000,
          retryPolicy: { minBackoffMs: 60_000, maxBackoffMs: 60_000 },
        });
        const id = await sendJob(queue, { steps: 300, stepMs: 100 });
        const worker = startWorker(queue, { stopGraceSeconds: 0.5 });
        await worker.waitFor((e) => e.event === "checkpoint" && e.id === id);
        worker.child.kill("SIGTERM");
        await worker.waitFor((e) => e.event === "cancelled" && e.id === id, 5000);
        await worker.waitFor((e) => e.event === "stopped", 10_000);
        expect(await worker.exited(), worker.stderr()).toBe(0);
        // Visible now: neither the 30 s lease nor the retry backoff holds it.
        expect(broker.counts(queue)).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
        const [again] = await broker.client.receive(queue);
        const lastStep = Math.max(...eventsOf(worker, "checkpoint").map((e) => e.step as number));
        expect(again).toMatchObject({ messageId: id, receiveCount: 2 });
        expect([lastStep, lastStep + 1]).toContain(Number(text(again!.checkpoint)));
      });

      it("brings a message back no sooner than a RetryLater asks", async () => {
        const queue = await newQueue({ visibilityTimeoutMs: 30_000 });
        const id = await sendJob(queue, { failTimes: 1, failure: "retryLater", retrySeconds: 2 });
        const worker = startWorker(queue);
        await worker.waitFor((e) => e.event === "retrying" && e.id === id);
        const retryingAt = performance.now();
        await vi.waitFor(() => expect(broker.counts(queue)).toEqual({ visible: 0, inFlight: 0, delayed: 1 }), {
          timeout: 1000,
          interval: 10,
        });
        await worker.waitFor((e) => e.event === "received" && e.receiveCount === 2, 10_000);
        expect(performance.now() - retryingAt, "waited the RetryLater").toBeGreaterThanOrEqual(1800);
        await worker.waitFor((e) => e.event === "finished" && e.id === id);
        await emptied(queue);
      });

      it("with concurrency 3 never holds more than 3 leases, and uses all 3", async () => {
        const queue = await newQueue({ visibilityTimeoutMs: 10_000 });
        const ids = await Promise.all(
          Array.from({ length: 12 }, () => sendJob(queue, { steps: 4, stepMs: 100, checkpoint: false })),
        );
        const watching = watch(queue);
        const worker = startWorker(queue, { concurrency: 3 });
        await vi.waitFor(() => expect(eventsOf(worker, "finished")).toHaveLength(12), {
          timeout: 20_000,
          interval: 20,
        });
        await emptied(queue);
        const { maxInFlight } = watching.stop();
        expect(maxInFlight, "leases held at once").toBeLessThanOrEqual(3);
        expect(Math.max(...eventsOf(worker, "received").map((e) => e.active as number)), "handlers at once").toBe(3);
        expect(
          eventsOf(worker, "finished")
            .map((e) => e.id)
            .sort(),
        ).toEqual([...ids].sort());
        expect(eventsOf(worker, "received")).toHaveLength(12);
      }, 30_000);

      it("keeps its lease across a broker restart mid-job: the stream reconnects and nothing is delivered twice", async () => {
        // 12 s of work on an 8 s lease: it finishes only if the lease is renewed after the restart, and
        // the renewal before it leaves about 5 s for the restart and the reconnect, on a loaded machine.
        const queue = await newQueue({ visibilityTimeoutMs: 8000 });
        const id = await sendJob(queue, { steps: 40, stepMs: 300 });
        const worker = startWorker(queue);
        await worker.waitFor((e) => e.event === "checkpoint" && (e.step as number) >= 2, 15_000);
        await broker.restart(queue);
        await worker.waitFor((e) => e.event === "finished" && e.id === id, 30_000);
        await emptied(queue);
        expect(eventsOf(worker, "received"), "one delivery").toHaveLength(1);
        expect(eventsOf(worker, "checkpoint").map((e) => e.step)).toEqual(
          Array.from({ length: 40 }, (_, step) => step),
        );
      }, 60_000);

      it("renews a 2 s lease through 10 s of work", async () => {
        const queue = await newQueue({ visibilityTimeoutMs: 2000 });
        const id = await sendJob(queue, { steps: 20, stepMs: 500, checkpoint: false });
        const worker = startWorker(queue);
        await worker.waitFor((e) => e.event === "received" && e.id === id);
        const watching = watch(queue);
        await worker.waitFor((e) => e.event === "finished" && e.id === id, 30_000);
        expect(watching.stop().everVisible, "the lease never ran out").toBe(false);
        await emptied(queue);
        expect(eventsOf(worker, "received"), "one delivery").toHaveLength(1);
      }, 40_000);
    });
  });
}
