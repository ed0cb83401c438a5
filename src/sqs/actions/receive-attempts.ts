import { clone } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { ReceivedMessageSchema, type ReceivedMessage } from "../../../gen/holdshelf/v1/message_pb.js";
import { printableIdPattern } from "../../protocol/printable-id-pattern.js";
import type { Clock } from "../../time/clock.js";
import { sqsErrors } from "../sqs-error.js";

/** How long SQS keeps a ReceiveRequestAttemptId: a retry after this is a new receive. */
export const attemptWindowMs = 5 * 60_000;

/** What the memory of attempts may hold, at most: beyond it, the oldest attempts are forgotten first. */
export interface ReceiveAttemptLimits {
  readonly maxAttempts: number;
  /** Bytes of the kept answers: bodies and attributes, plus a fixed overhead per message. */
  readonly maxBytes: number;
}

const defaultLimits: ReceiveAttemptLimits = { maxAttempts: 10_000, maxBytes: 64 * 1024 * 1024 };

// Counted per kept message besides its body and attributes: ids, handles, timestamps, the object itself.
const perMessageOverheadBytes = 512;

/** One receive remembered under its attempt id; callers hold it to tell it from a later attempt of the same id. */
export interface RememberedAttempt {
  /** The answer: pending while the first receive still waits (a long poll), so a retry meanwhile shares it. */
  readonly answer: Promise<readonly ReceivedMessage[]>;
  /** When the first of the answer's leases runs out, as last set (Infinity until the answer is known). */
  readonly leasesEndMs: number;
}

interface Attempt extends RememberedAttempt {
  readonly atMs: number;
  // Replaced by a trimmed copy once known (see `keep`).
  answer: Promise<readonly ReceivedMessage[]>;
  leasesEndMs: number;
  bytes: number;
  /** The answer's receipt handles, once it is known. */
  handles: readonly string[];
}

/**
 * SQS's ReceiveRequestAttemptId on FIFO queues: a ReceiveMessage retried with
 * the same id within five minutes, while the first answer's leases are still
 * held, gets that answer again, with the same receipt handles, instead of
 * the next messages. A consumer whose answer was lost on the network
 * otherwise leaves those messages in flight, and their groups blocked, until
 * the visibility timeout runs out. receive-with-attempt.ts decides when a
 * retry is the same receive; this class keeps the answers.
 *
 * Attempts are kept per caller (the signing access key's entry) and queue,
 * so one consumer cannot take over another's leases by guessing its id. They
 * live in this endpoint's memory: a retry that reaches another broker of a
 * cluster, or this one after a restart, is a new receive, as it was before
 * SQS had attempt ids. Memory is bounded (`ReceiveAttemptLimits`); an
 * attempt forgotten early also just makes its retry a new receive.
 */
export class ReceiveAttempts {
  // Insertion order is time order: expiry and eviction take from the front.
  private readonly attempts = new Map<string, Attempt>();
  // Which remembered attempt each receipt handle was answered in.
  private readonly attemptOfHandle = new Map<string, string>();
  private bytes = 0;

  constructor(
    private readonly clock: Clock,
    private readonly limits: ReceiveAttemptLimits = defaultLimits,
  ) {}

  /** How many attempts are remembered now (for tests and bounds). */
  get size(): number {
    return this.attempts.size;
  }

  /** The attempt of `key`, if it is still within its window; its answer may still be pending. */
  find(key: AttemptKey): RememberedAttempt | undefined {
    this.expire();
    return this.attempts.get(keyText(key));
  }

  /**
   * Remembers `answer` under `key`, replacing an earlier attempt of the key,
   * and returns the new attempt. An answer that fails or is empty is
   * forgotten once known.
   */
  remember(key: AttemptKey, answer: Promise<readonly ReceivedMessage[]>): RememberedAttempt {
    this.expire();
    const text = keyText(key);
    this.forget(text);
    const attempt: Attempt = { atMs: this.clock.now(), answer, bytes: 0, handles: [], leasesEndMs: Infinity };
    this.attempts.set(text, attempt);
    answer.then(
      (messages) => {
        if (this.attempts.get(text) === attempt) this.keep(text, attempt, messages);
      },
      () => {
        if (this.attempts.get(text) === attempt) this.forget(text);
      },
    );
    this.evictBeyondLimits();
    return attempt;
  }

  /**
   * Whether `attempt` is still the attempt of `key` (nothing settled one of
   * its messages meanwhile) and none of its leases has run out: only then is
   * a retry the same receive. A lease that ran out makes the next delivery a
   * redelivery, counted towards the dead-letter limit like any other.
   */
  leasesHeld(key: AttemptKey, attempt: RememberedAttempt): boolean {
    return this.isCurrent(key, attempt) && this.clock.now() < attempt.leasesEndMs;
  }

  /** Whether `attempt` is still the attempt of `key`. */
  isCurrent(key: AttemptKey, attempt: RememberedAttempt): boolean {
    return this.attempts.get(keyText(key)) === attempt;
  }

  /** Records that the leases of `attempt` were renewed, to run out first at `leasesEndMs`. */
  renewed(key: AttemptKey, attempt: RememberedAttempt, leasesEndMs: number): void {
    // The attempt of `key` is an Attempt: this class made it.
    if (this.isCurrent(key, attempt)) (attempt as Attempt).leasesEndMs = leasesEndMs;
  }

  /**
   * Forgets `attempt` once its leases are no longer all held (deleted,
   * received again): the next retry of its id is a new receive. A later
   * attempt that replaced it meanwhile stays.
   */
  drop(key: AttemptKey, attempt: RememberedAttempt): void {
    if (this.isCurrent(key, attempt)) this.forget(keyText(key));
  }

  /**
   * Forgets the attempt that answered `receiptHandle`, whose message was
   * deleted or had its visibility changed through this endpoint: SQS
   * repeats an answer only while none of its messages was modified, and a
   * consumer that settles a message has had the answer.
   */
  settled(receiptHandle: string): void {
    const text = this.attemptOfHandle.get(receiptHandle);
    if (text !== undefined) this.forget(text);
  }

  /**
   * Keeps a known answer: a copy without checkpoints (the SQS endpoint never
   * shows them) whose bodies no longer share the whole answer's buffer, so
   * the memory counted is the memory held.
   */
  private keep(text: string, attempt: Attempt, messages: readonly ReceivedMessage[]): void {
    if (messages.length === 0) return this.forget(text);
    const kept = messages.map(trimmed);
    const bytes = kept.reduce((sum, message) => sum + answerBytes(message), 0);
    // Kept, it would push every other attempt out.
    if (bytes > this.limits.maxBytes) return this.forget(text);
    attempt.answer = Promise.resolve(kept);
    attempt.bytes = bytes;
    this.bytes += bytes;
    attempt.handles = kept.map((message) => message.receiptHandle);
    for (const handle of attempt.handles) this.attemptOfHandle.set(handle, text);
    attempt.leasesEndMs = Math.min(
      ...kept.map((message) => (message.leaseDeadline === undefined ? Infinity : timestampMs(message.leaseDeadline))),
    );
    this.evictBeyondLimits();
  }

  private forget(text: string): void {
    const attempt = this.attempts.get(text);
    if (attempt === undefined) return;
    this.bytes -= attempt.bytes;
    for (const handle of attempt.handles) this.attemptOfHandle.delete(handle);
    this.attempts.delete(text);
  }

  private expire(): void {
    const now = this.clock.now();
    for (const [text, attempt] of this.attempts) {
      if (attempt.atMs + attemptWindowMs > now) return;
      this.forget(text);
    }
  }

  private evictBeyondLimits(): void {
    for (const text of this.attempts.keys()) {
      if (this.attempts.size <= this.limits.maxAttempts && this.bytes <= this.limits.maxBytes) return;
      this.forget(text);
    }
  }
}

/** Whose attempt, on which queue, under which id. */
export interface AttemptKey {
  /** The name of the access key's entry in the credentials file; "" when the endpoint takes unsigned requests. */
  readonly caller: string;
  readonly queue: string;
  readonly attemptId: string;
}

/** A ReceiveRequestAttemptId checked as SQS checks it; InvalidParameterValue otherwise. */
export function checkAttemptId(attemptId: string): string {
  if (!printableIdPattern.test(attemptId)) {
    throw sqsErrors.invalidParameterValue(
      "Value for parameter ReceiveRequestAttemptId is invalid. Reason: ReceiveRequestAttemptId must be 1 to 128 alphanumeric or punctuation characters.",
    );
  }
  return attemptId;
}

function keyText({ caller, queue, attemptId }: AttemptKey): string {
  return JSON.stringify([caller, queue, attemptId]);
}

function trimmed(message: ReceivedMessage): ReceivedMessage {
  const copy = clone(ReceivedMessageSchema, message);
  copy.checkpoint = undefined;
  // clone's copy of a bytes field is a view when it is a Buffer (Buffer's
  // slice), as a decoded answer's are and a local one's share the store's
  // buffers: copy them into memory of their own.
  copy.body = new Uint8Array(message.body);
  for (const value of Object.values(copy.typedAttributes)) {
    if (value.value.case === "binaryValue") value.value.value = new Uint8Array(value.value.value);
  }
  return copy;
}

function answerBytes(message: ReceivedMessage): number {
  let bytes = perMessageOverheadBytes + message.body.length;
  for (const [name, { dataType, value }] of Object.entries(message.typedAttributes)) {
    bytes +=
      Buffer.byteLength(name) +
      dataType.length +
      (typeof value.value === "string" ? Buffer.byteLength(value.value) : (value.value?.length ?? 0));
  }
  for (const [name, value] of Object.entries(message.attributes))
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  return bytes;
}
