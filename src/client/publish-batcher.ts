import { maxBatchEntries, maxSendBatchBytes } from "../protocol/limits.js";
import { monotonicClock, type Clock, type Timer } from "../time/clock.js";
import { bodyBytes } from "./client-convert.js";
import { RpcError } from "./rpc-error.js";
import type { SendBatchEntry, SendResult } from "./types.js";

/** How a QueueClient gathers single sends into SendBatch calls (Pub/Sub's batch settings). */
export interface BatchingOptions {
  /** The most sends in one SendBatch, 1 to 100. Default 100. */
  readonly maxMessages?: number | undefined;
  /** The most bytes (bodies and attributes) in one SendBatch, up to 4 MiB. Default 1 MiB. */
  readonly maxBytes?: number | undefined;
  /** How long a send waits for others to join its batch, in ms. Default 1; 0 turns batching off (a unary Send each). */
  readonly delayMs?: number | undefined;
}

/** The calls a PublishBatcher makes. */
export interface PublishCalls {
  send(queue: string, entry: SendBatchEntry): Promise<SendResult>;
  sendBatch(queue: string, entries: readonly SendBatchEntry[]): Promise<SendResult[]>;
}

interface Pending {
  readonly entry: SendBatchEntry;
  readonly bytes: number;
  resolve(result: SendResult): void;
  reject(error: unknown): void;
}

interface QueueBatch {
  readonly queue: string;
  pending: Pending[];
  bytes: number;
  timer: Timer | undefined;
  sending: boolean;
  idle: (() => void)[];
}

const utf8 = new TextEncoder();
// The first entry a batch's error names: "entries[3].delay" names entry 3.
const entryField = /^entries\[(\d+)\]\.?/;

/**
 * Gathers single sends into SendBatch calls, per queue: a batch goes when it
 * holds maxMessages sends or maxBytes, or delayMs after its first send came.
 * One call per queue is in flight at a time, and batches are cut in send
 * order, so a FIFO group keeps its order. Each send gets its own result; a
 * batch refused for one entry (its error names entries[i]) fails that send
 * alone and goes again without it. A send too large for a batch goes alone
 * as a unary Send, in its turn.
 */
export class PublishBatcher {
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  private readonly delayMs: number;
  private readonly queues = new Map<string, QueueBatch>();

  constructor(
    private readonly calls: PublishCalls,
    options: BatchingOptions = {},
    private readonly clock: Clock = monotonicClock,
  ) {
    this.maxMessages = check("maxMessages", options.maxMessages ?? maxBatchEntries, 1, maxBatchEntries);
    this.maxBytes = check("maxBytes", options.maxBytes ?? 1024 * 1024, 1, maxSendBatchBytes);
    // 1 ms, not Pub/Sub's 10: a service that awaits each send can send at most once per delay and round trip, and
    // 1 ms gathered 32 such senders as well as 5 ms did, at 1.3-1.8 times the rate (docs/performance.md, scenario 16).
    this.delayMs = check("delayMs", options.delayMs ?? 1, 0, 2_147_483_647);
  }

  /** Sends one message in the queue's next batch; resolves to its own result, or rejects with its own error. */
  publish(queue: string, entry: SendBatchEntry): Promise<SendResult> {
    if (this.delayMs === 0) return this.calls.send(queue, entry);
    let batch = this.queues.get(queue);
    if (batch === undefined) {
      batch = { queue, pending: [], bytes: 0, timer: undefined, sending: false, idle: [] };
      this.queues.set(queue, batch);
    }
    const target = batch;
    // Encoded once: measured now, sent later.
    const encoded = { ...entry, body: bodyBytes(entry.body) };
    return new Promise((resolve, reject) => {
      const bytes = entryBytes(encoded);
      target.pending.push({ entry: encoded, bytes, resolve, reject });
      target.bytes += bytes;
      if (target.pending.length >= this.maxMessages || target.bytes >= this.maxBytes) this.kick(target);
      else target.timer ??= this.clock.setTimer(this.delayMs, () => this.kick(target));
    });
  }

  /** Sends everything pending now, without waiting for the delay; resolves once every send is answered. */
  async flush(): Promise<void> {
    await Promise.all(
      [...this.queues.values()].map((batch) => {
        if (batch.pending.length === 0 && !batch.sending) return undefined;
        const idle = new Promise<void>((resolve) => batch.idle.push(resolve));
        this.kick(batch);
        return idle;
      }),
    );
  }

  /** Whether any send waits or is in flight. */
  get busy(): boolean {
    for (const batch of this.queues.values()) if (batch.pending.length > 0 || batch.sending) return true;
    return false;
  }

  /** Sends the queue's next batch now, unless one is in flight (its end sends the next). */
  private kick(batch: QueueBatch): void {
    batch.timer?.cancel();
    batch.timer = undefined;
    if (batch.sending) return;
    if (batch.pending.length === 0) {
      this.queues.delete(batch.queue);
      for (const resolve of batch.idle.splice(0)) resolve();
      return;
    }
    batch.sending = true;
    const taken = this.take(batch);
    void this.send(batch.queue, taken).then((retry) => {
      batch.sending = false;
      // Sent again first: their turn came before the sends that waited meanwhile.
      batch.pending.unshift(...retry);
      batch.bytes += retry.reduce((sum, pending) => sum + pending.bytes, 0);
      // What came meanwhile waited for this call already: it goes now.
      this.kick(batch);
    });
  }

  /** Cuts the next batch off the front of the queue's sends: within the count and bytes, or one oversized send. */
  private take(batch: QueueBatch): Pending[] {
    let count = 0;
    let bytes = 0;
    for (const pending of batch.pending) {
      if (count === this.maxMessages || (count > 0 && bytes + pending.bytes > this.maxBytes)) break;
      count++;
      bytes += pending.bytes;
    }
    batch.bytes -= bytes;
    return batch.pending.splice(0, count);
  }

  /** Sends one batch and settles its sends; returns those to send again (the rest of a batch one entry failed). */
  private async send(queue: string, taken: Pending[]): Promise<Pending[]> {
    if (taken.length === 1 && taken[0]!.bytes > this.maxBytes) {
      const [alone] = taken as [Pending];
      await this.calls.send(queue, alone.entry).then(alone.resolve, alone.reject);
      return [];
    }
    try {
      const results = await this.calls.sendBatch(
        queue,
        taken.map((pending) => pending.entry),
      );
      taken.forEach((pending, index) => {
        pending.resolve(results[index]!);
      });
      return [];
    } catch (error) {
      const index = failedEntry(error, taken.length);
      if (index === undefined) {
        for (const pending of taken) pending.reject(error);
        return [];
      }
      taken[index]!.reject(asSendError(error as RpcError));
      return taken.filter((_, other) => other !== index);
    }
  }
}

/** The entry a SendBatch error is about, when every field it names is in one entry. */
function failedEntry(error: unknown, count: number): number | undefined {
  if (!(error instanceof RpcError) || error.violations.length === 0) return undefined;
  const indexes = new Set(error.violations.map((violation) => entryField.exec(violation.field)?.[1]));
  if (indexes.size !== 1) return undefined;
  const [index] = indexes;
  if (index === undefined) return undefined;
  const entry = Number(index);
  return entry < count ? entry : undefined;
}

/** A batch's error about one entry as a unary Send's: the same code and reason, the fields named as Send names them. */
function asSendError(error: RpcError): RpcError {
  const violations = error.violations.map((violation) => ({
    ...violation,
    field: violation.field.replace(entryField, ""),
  }));
  return new RpcError(error.code, error.reason, error.message, violations, { cause: error });
}

/** A message's size as the broker counts it toward a SendBatch's limit: body, attributes and typed attributes. */
function entryBytes(entry: SendBatchEntry & { readonly body: Uint8Array }): number {
  let bytes = entry.body.byteLength;
  for (const [key, value] of Object.entries(entry.attributes ?? {})) {
    bytes += utf8.encode(key).byteLength + utf8.encode(value).byteLength;
  }
  for (const [name, { dataType, value }] of Object.entries(entry.typedAttributes ?? {})) {
    bytes += utf8.encode(name).byteLength + utf8.encode(dataType).byteLength;
    bytes += typeof value === "string" ? utf8.encode(value).byteLength : value.byteLength;
  }
  return bytes;
}

function check(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`BatchingOptions.${name} is out of range (${min} to ${max}): ${value}`);
  }
  return value;
}
