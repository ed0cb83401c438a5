import { invalidArgument } from "../errors/holdshelf-error.js";
import type { MessageContent, ScheduleEntry, Store, StoreOp } from "../store/store.js";
import type { BrokerEvents } from "./broker-events.js";
import { noneElsewhere, type ClusterQueues } from "../store/cluster-queues.js";
import type { Clock } from "../time/clock.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import { formatMessageId } from "./message-id.js";
import { crossShardSequence } from "./sequence-number.js";
import { removeMessageOp } from "./store-ops.js";

/** The reason a message moved to a dead-letter queue after too many deliveries. */
export const maxReceiveCountExceeded = "MAX_RECEIVE_COUNT_EXCEEDED";

// Messages moved per atomic batch by a redrive.
const redriveBatch = 100;

/** Told when messages arrive in a queue, so its waiting receives can take them. */
type Arrived = (queue: QueueState) => void;

/**
 * Moves messages between a queue and its dead-letter queue. Each move is one
 * atomic batch that removes the message from one data space and writes it
 * into the other, so that it is never in both queues and never in neither,
 * whatever moment a crash picks. The message keeps its id, body, attributes
 * (typed ones too), send time and delivery epoch (so no old receipt handle can ever match a
 * later delivery); its retention counts from its arrival. A dead-letter move
 * keeps its receive history too (receive count and first receive, as AWS
 * does), and its arrival time is when it was dead-lettered; a redrive or a
 * move out of a dead-letter queue starts that history again, so that the
 * message is not spent the moment it arrives back.
 */
export class DeadLetters {
  /** The last dead-letter move of each FIFO queue with one under way, for the next to wait on. */
  private readonly fifoMoves = new Map<QueueState, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly registry: QueueRegistry,
    private readonly arrived: Arrived,
    private readonly events: BrokerEvents,
    // Cluster mode: the queue a message moves to may be another broker's (the move goes to its inbox).
    private readonly cluster: ClusterQueues = noneElsewhere,
  ) {}

  /**
   * Moves spent messages, already taken out of their queue's memory, to its
   * dead-letter queue: here, or (cluster mode) another broker's. If that
   * queue is gone (it cannot be deleted while named, but a policy may
   * change), the messages go back where they were.
   */
  async deadLetter(source: QueueState, messages: readonly LiveMessage[]): Promise<void> {
    // Remembered from now, so that a Delete that comes while the move is being written (a handler that gave
    // its last delivery back, then acks) hears of it; moveSpent withdraws each message not moved in the end.
    const now = this.clock.now();
    for (const { id, epoch } of messages) source.departures.note(id, epoch, "dead-lettered", now);
    if (!source.fifo) return this.moveSpent(source, messages);
    // A FIFO queue's moves run one after another, in the order their messages
    // were set aside (each group's in order): each takes its sequence numbers
    // in the dead-letter queue after its awaits, where a slow read would let
    // a later move overtake it.
    const previous = this.fifoMoves.get(source) ?? Promise.resolve();
    const run = previous.then(() => this.moveSpent(source, messages));
    const tail = run.catch(() => undefined);
    this.fifoMoves.set(source, tail);
    void tail.then(() => {
      if (this.fifoMoves.get(source) === tail) this.fifoMoves.delete(source);
    });
    return run;
  }

  /** deadLetter's move, for one batch of spent messages; only the messages it moved stay remembered as dead-lettered. */
  private async moveSpent(source: QueueState, messages: readonly LiveMessage[]): Promise<void> {
    const withdraw = (unmoved: readonly LiveMessage[]): void => {
      for (const { id, epoch } of unmoved) source.departures.withdraw(id, epoch, "dead-lettered");
    };
    try {
      await this.moveSpentNow(source, messages, withdraw);
    } catch (error) {
      // Not committed: nothing moved, whatever the store kept.
      withdraw(messages);
      throw error;
    }
  }

  private async moveSpentNow(
    source: QueueState,
    messages: readonly LiveMessage[],
    withdraw: (unmoved: readonly LiveMessage[]) => void,
  ): Promise<void> {
    const target = await this.find(source.record.config.redrivePolicy?.deadLetterQueue ?? "");
    if (target === undefined) {
      withdraw(messages);
      source.putBack(messages, this.clock.now());
      return;
    }
    const origin = { sourceQueue: source.record.name, reason: maxReceiveCountExceeded };
    const contents = await this.store.readMessages(source.record.dataId, messages);
    // A FIFO message's deduplication id becomes its message id in the dead-letter queue, as in SQS.
    const arriving = contents.map((content, index) => {
      if (content === undefined) return undefined;
      const { group, id } = messages[index]!;
      const deduplicationId = group === undefined ? undefined : formatMessageId(id);
      return {
        ...stripped(content),
        deadLetter: origin,
        ...(deduplicationId === undefined ? {} : { deduplicationId }),
      };
    });
    await this.move(source, target, messages, arriving, "kept");
    // Messages purged meanwhile were only removed, not moved.
    const purged = messages.filter((_, index) => contents[index] === undefined);
    withdraw(purged);
    const moved = messages.length - purged.length;
    this.events.deadLettered(source.record.name, typeof target === "string" ? target : target.record.name, moved);
  }

  /**
   * The queue of that name: this broker's, or the name alone where another
   * broker serves it (cluster mode); undefined where there is none.
   */
  async find(name: string): Promise<MoveTarget | undefined> {
    if (name === "") return undefined;
    const local = this.registry.find(name);
    if (local !== undefined) return local;
    return (await this.cluster.existsElsewhere(name)) ? name : undefined;
  }

  /**
   * The destination_queue a redrive or a message move task out of `from`
   * names: undefined for "" (each message goes back to its source queue),
   * else this broker's queue or (cluster mode) the name of another broker's.
   * QUEUE_NOT_FOUND if there is none; INVALID_ARGUMENT if it is `from`
   * itself (`role` says what `from` is), or not of `from`'s kind (FIFO
   * messages need a FIFO queue, and a FIFO queue takes nothing else).
   */
  async destination(name: string, from: QueueState, role: string): Promise<MoveTarget | undefined> {
    if (name === "") return undefined;
    const field = "destination_queue";
    const local = this.registry.find(name);
    const fifo = local !== undefined ? local.fifo : await this.cluster.fifoElsewhere(name);
    if (fifo !== undefined && fifo !== from.fifo) {
      throw invalidArgument(field, `must be ${from.fifo ? "a FIFO" : "a standard"} queue, as "${from.record.name}" is`);
    }
    // Bad names, unknown queues and queues moving away answer as the registry does.
    const target = local ?? (await this.find(name)) ?? this.registry.get(name, field);
    if (target === from) throw invalidArgument(field, `must be another queue than the ${role}`);
    return target;
  }

  /**
   * Moves up to `maxMessages` visible messages out of a dead-letter queue,
   * oldest first, to `destination` or else each one's source queue, at most
   * `maxPerSecond` a second (0: no limit). In-flight messages stay. Returns
   * how many moved; stops early when `signal` aborts.
   */
  async redrive(
    deadLetterQueue: QueueState,
    destination: MoveTarget | undefined,
    maxMessages: number,
    maxPerSecond: number,
    signal: AbortSignal | undefined,
    options: RedriveOptions = {},
  ): Promise<number> {
    let moved = 0;
    const stranded: LiveMessage[] = [];
    // Each source queue is looked up once per redrive, not once per message.
    const sources = new Map<string, Promise<MoveTarget | undefined>>();
    const now = options.enqueuedBy ?? this.clock.now();
    while (moved < maxMessages && !signal?.aborted && !deadLetterQueue.deleted) {
      const started = this.clock.now();
      const batch: LiveMessage[] = [];
      const want = Math.min(redriveBatch, maxMessages - moved, maxPerSecond || redriveBatch);
      // A FIFO queue gives its groups in turn, not in arrival order: a group
      // whose next message came after the start is set aside for this batch
      // (taken, then put back as it was) while the other groups still move.
      const later: LiveMessage[] = [];
      for (
        let next = deadLetterQueue.nextVisible();
        next !== undefined && batch.length < want;
        next = deadLetterQueue.nextVisible()
      ) {
        // Only what was visible when the redrive began: not messages dead-lettered since.
        if (next.enqueuedAt > now) {
          if (!deadLetterQueue.fifo) break;
          deadLetterQueue.take(next);
          later.push(next);
          continue;
        }
        deadLetterQueue.remove(next);
        batch.push(next);
      }
      for (const message of later) deadLetterQueue.untake(message, this.clock.now());
      if (batch.length === 0) break;
      const movedBefore = moved;
      const unmoved = new Set(batch);
      try {
        const contents = await this.store.readMessages(deadLetterQueue.record.dataId, batch);
        const byTarget = new Map<MoveTarget, { messages: LiveMessage[]; contents: (MessageContent | undefined)[] }>();
        for (const [index, message] of batch.entries()) {
          const content = contents[index];
          const target = destination ?? (await this.findCached(content?.deadLetter?.sourceQueue ?? "", sources));
          // A queue re-created under a source's name as the other kind (FIFO or standard) cannot take it either.
          const otherKind =
            target !== undefined && typeof target !== "string" && target.fifo !== (message.group !== undefined);
          if (target === undefined || (typeof target !== "string" && target.deleted) || otherKind) {
            unmoved.delete(message);
            stranded.push(message); // its source queue is gone: it stays
            continue;
          }
          const group = byTarget.get(target) ?? { messages: [], contents: [] };
          group.messages.push(message);
          group.contents.push(content && stripped(content));
          byTarget.set(target, group);
        }
        for (const [target, group] of byTarget) {
          await this.move(deadLetterQueue, target, group.messages, group.contents, "restarted");
          moved += group.messages.length;
          for (const message of group.messages) unmoved.delete(message);
        }
      } catch (error) {
        // What was taken out and not moved goes back, rather than out of sight until a restart.
        deadLetterQueue.putBack([...stranded, ...unmoved], this.clock.now());
        throw error;
      }
      await options.onBatch?.(moved - movedBefore);
      if (maxPerSecond > 0) await this.pace(started, batch.length, maxPerSecond, signal);
    }
    deadLetterQueue.putBack(stranded, this.clock.now());
    return moved;
  }

  /**
   * Moves one message, already taken out of `from`'s memory, with the content
   * read of it, to `to` as a redrive moves it (MessageAdmin.move). If the
   * write fails, it goes back where it was.
   */
  async moveOne(from: QueueState, to: MoveTarget, message: LiveMessage, content: MessageContent): Promise<void> {
    try {
      await this.move(from, to, [message], [stripped(content)], "restarted");
    } catch (error) {
      from.putBack([message], this.clock.now());
      throw error;
    }
  }

  private findCached(
    name: string,
    cache: Map<string, Promise<MoveTarget | undefined>>,
  ): Promise<MoveTarget | undefined> {
    let found = cache.get(name);
    if (found === undefined) cache.set(name, (found = this.find(name)));
    return found;
  }

  /**
   * Writes messages (taken out of `from`'s memory) into `to` with the given
   * contents, in one batch, then shows them there. A message whose content
   * is gone (purged meanwhile) is only removed. A queue another broker
   * serves gets them in its inbox, in the same batch, and shows them once
   * its broker takes them in. `history` says whether they keep their
   * receive count and first receive (a dead-letter move) or start them again.
   */
  private async move(
    from: QueueState,
    to: MoveTarget,
    messages: readonly LiveMessage[],
    contents: readonly (MessageContent | undefined)[],
    history: ReceiveHistory,
  ): Promise<void> {
    const now = this.clock.now();
    const toDataId = typeof to === "string" ? undefined : to.record.dataId;
    const ops: StoreOp[] = [];
    const arrivals: ScheduleEntry[] = [];
    messages.forEach((message, index) => {
      ops.push(removeMessageOp(from.record.dataId, message));
      const content = contents[index];
      if (content === undefined) return; // purged meanwhile: nothing to move
      const entry: ScheduleEntry = {
        id: message.id,
        readyAt: now,
        leased: false,
        receiveCount: history === "kept" ? message.receiveCount : 0,
        epoch: message.epoch,
        sendTime: message.sendTime,
        enqueuedAt: now,
        firstReceiveAt: history === "kept" ? message.firstReceiveAt : 0,
        leaseStart: 0,
        size: message.size,
        hasCheckpoint: false,
        // A FIFO message keeps its group and takes the next sequence number where it arrives.
        group: message.group,
        sequence:
          message.group === undefined
            ? undefined
            : typeof to === "string"
              ? crossShardSequence(now)
              : to.nextSequence(now),
      };
      if (typeof to === "string") ops.push({ kind: "putInbound", queue: to, entry, content });
      else ops.push({ kind: "putMessage", dataId: toDataId!, entry, content });
      arrivals.push(entry);
    });
    await this.store.commit(ops);
    if (typeof to === "string")
      return this.cluster.takenIn(
        to,
        arrivals.map((entry) => entry.id),
      );
    if (to.deleted || to.record.dataId !== toDataId) return;
    for (const entry of arrivals) to.add(entry, this.clock.now());
    this.arrived(to);
    if (arrivals.length > 0) this.events.arrived(to.record.name, arrivals.length);
  }

  /** Waits so that `count` messages since `started` keep to `maxPerSecond`. */
  private pace(started: number, count: number, maxPerSecond: number, signal: AbortSignal | undefined): Promise<void> {
    const waitMs = started + (count * 1000) / maxPerSecond - this.clock.now();
    if (waitMs <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(waitMs, () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
      const onAbort = (): void => {
        timer.cancel();
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** How a message move task runs a redrive (RedriveMessages sets none of it). */
export interface RedriveOptions {
  /** Moves only messages that arrived by this time; when the redrive starts, if unset. */
  readonly enqueuedBy?: number;
  /** Told how many messages each batch moved, once they are durable; the redrive waits for it. */
  readonly onBatch?: (moved: number) => Promise<void>;
}

/** Where a move goes: a queue this broker serves, or the name of one another broker serves (cluster mode). */
export type MoveTarget = QueueState | string;

/** Whether a moved message keeps its receive count and first receive (a dead-letter move) or starts them again (a redrive). */
type ReceiveHistory = "kept" | "restarted";

/**
 * A message's body and attributes, typed ones too, a FIFO message's
 * deduplication id and its trace header, without a reading's checkpoint or
 * an earlier dead-letter origin.
 */
function stripped({ body, attributes, typedAttributes, deduplicationId, traceHeader }: MessageContent): MessageContent {
  return {
    body,
    attributes,
    typedAttributes,
    ...(deduplicationId === undefined ? {} : { deduplicationId }),
    ...(traceHeader === undefined ? {} : { traceHeader }),
  };
}
