import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { ReceivedMessage } from "../../../gen/holdshelf/v1/message_pb.js";
import type { Clock } from "../../time/clock.js";
import { sqsErrors } from "../sqs-error.js";

/** How long SQS keeps a ReceiveRequestAttemptId: a retry after this is a new receive. */
export const attemptWindowMs = 5 * 60_000;

// 1 to 128 characters of alphanumerics and punctuation, as SQS takes it.
const attemptIdPattern = /^[\x21-\x7e]{1,128}$/;

/** What one attempt's memory may hold, at most: beyond it, the oldest attempts are forgotten first. */
export interface ReceiveAttemptLimits {
  readonly maxAttempts: number;
  /** Bytes of message bodies and attributes, roughly: the answers are kept whole. */
  readonly maxBytes: number;
}

const defaultLimits: ReceiveAttemptLimits = { maxAttempts: 10_000, maxBytes: 64 * 1024 * 1024 };

// Counted per kept message besides its body: ids, handles, attributes' keys.
const perMessageOverheadBytes = 512;

/** One FIFO receive, kept under its attempt id. */
interface Attempt {
  readonly atMs: number;
  /** The broker's answer: pending while the first receive still waits (a long poll), so a retry meanwhile shares it. */
  readonly answer: Promise<readonly ReceivedMessage[]>;
  bytes: number;
  /** The answer's receipt handles, once it is known. */
  handles: readonly string[];
  /** When the first of the answer's leases runs out, as last set (Infinity until the answer is known). */
  leasesEndMs: number;
}

/**
 * SQS's ReceiveRequestAttemptId on FIFO queues: a ReceiveMessage retried with
 * the same id within five minutes, while the first answer's leases are still
 * held, gets that answer again, with the same receipt handles, instead of
 * the next messages. A consumer whose answer was lost on the network
 * otherwise leaves those messages in flight, and their groups blocked, until
 * the visibility timeout runs out.
 *
 * Attempts are kept per caller (the signing access key) and queue, so one
 * consumer cannot take over another's leases by guessing its id. They live
 * in this endpoint's memory: a retry that reaches another broker of a
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

  /** The earlier answer of this attempt, if it is still within its window; it may still be pending. */
  find(key: AttemptKey): Promise<readonly ReceivedMessage[]> | undefined {
    this.expire();
    return this.attempts.get(keyText(key))?.answer;
  }

  /**
   * Remembers `answer` under `key`, replacing an earlier attempt of the key.
   * An answer that fails, or holds no FIFO message (a standard queue, where
   * SQS ignores attempt ids, or an empty receive), is forgotten once known.
   */
  remember(key: AttemptKey, answer: Promise<readonly ReceivedMessage[]>): void {
    this.expire();
    const text = keyText(key);
    this.forget(text);
    const attempt: Attempt = { atMs: this.clock.now(), answer, bytes: 0, handles: [], leasesEndMs: Infinity };
    this.attempts.set(text, attempt);
    answer.then(
      (messages) => {
        if (this.attempts.get(text) !== attempt) return;
        if (!messages.some((message) => message.messageGroupId !== "")) return this.forget(text);
        const bytes = messages.reduce((sum, message) => sum + answerBytes(message), 0);
        // Kept, it would push every other attempt out.
        if (bytes > this.limits.maxBytes) return this.forget(text);
        attempt.bytes = bytes;
        this.bytes += bytes;
        attempt.handles = messages.map((message) => message.receiptHandle);
        attempt.leasesEndMs = Math.min(...messages.map((message) => (message.leaseDeadline === undefined ? Infinity : timestampMs(message.leaseDeadline))));
        for (const handle of attempt.handles) this.attemptOfHandle.set(handle, text);
        this.evictBeyondLimits();
      },
      () => {
        if (this.attempts.get(text) === attempt) this.forget(text);
      },
    );
    this.evictBeyondLimits();
  }

  /**
   * Whether the attempt of `key` still holds `answer` (nothing settled one of
   * its messages meanwhile) and none of its leases has run out: only then is
   * a retry the same receive. A lease that ran out makes the next delivery a
   * redelivery, counted towards the dead-letter limit like any other.
   */
  leasesHeld(key: AttemptKey, answer: Promise<readonly ReceivedMessage[]>): boolean {
    const attempt = this.attempts.get(keyText(key));
    return attempt?.answer === answer && this.clock.now() < attempt.leasesEndMs;
  }

  /** Records that the leases of the attempt of `key` were renewed, to run out first at `leasesEndMs`. */
  renewed(key: AttemptKey, answer: Promise<readonly ReceivedMessage[]>, leasesEndMs: number): void {
    const attempt = this.attempts.get(keyText(key));
    if (attempt?.answer === answer) attempt.leasesEndMs = leasesEndMs;
  }

  /**
   * Forgets the attempt of `key` whose answer is `answer`, once its leases are
   * no longer all held (deleted, received again): its next retry is a new
   * receive. An attempt a concurrent retry has replaced meanwhile stays.
   */
  drop(key: AttemptKey, answer: Promise<readonly ReceivedMessage[]>): void {
    const text = keyText(key);
    if (this.attempts.get(text)?.answer === answer) this.forget(text);
  }

  /**
   * Forgets the attempt that answered `receiptHandle`, as its message is
   * deleted or its visibility changed through this endpoint: SQS repeats an
   * answer only while none of its messages was modified, and a consumer that
   * settles a message has had the answer.
   */
  settling(receiptHandle: string): void {
    const text = this.attemptOfHandle.get(receiptHandle);
    if (text !== undefined) this.forget(text);
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
  /** The access key's name in the auth file; "" when the endpoint takes unsigned requests. */
  readonly caller: string;
  readonly queue: string;
  readonly attemptId: string;
}

/** A ReceiveRequestAttemptId checked as SQS checks it; InvalidParameterValue otherwise. */
export function checkAttemptId(attemptId: string): string {
  if (!attemptIdPattern.test(attemptId)) {
    throw sqsErrors.invalidParameterValue(
      "Value for parameter ReceiveRequestAttemptId is invalid. Reason: ReceiveRequestAttemptId must be 1 to 128 alphanumeric or punctuation characters.",
    );
  }
  return attemptId;
}

function keyText({ caller, queue, attemptId }: AttemptKey): string {
  return JSON.stringify([caller, queue, attemptId]);
}

function answerBytes(message: ReceivedMessage): number {
  let bytes = perMessageOverheadBytes + message.body.length;
  for (const [name, { dataType, value }] of Object.entries(message.typedAttributes)) {
    bytes += name.length + dataType.length + (value.value?.length ?? 0);
  }
  for (const [name, value] of Object.entries(message.attributes)) bytes += name.length + value.length;
  return bytes;
}
