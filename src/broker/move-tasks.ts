import { randomUUID } from "node:crypto";
import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import { keptMoveTasks } from "../protocol/kept-move-tasks.js";
import { maxMoveTaskRate } from "../protocol/max-move-task-rate.js";
import { formatMoveTaskHandle, parseMoveTaskHandle } from "../protocol/move-task-handle.js";
import type { MoveTaskStatus, StoredMoveTask } from "../store/store.js";
import type { Clock } from "../time/clock.js";
import type { BrokerEvents } from "./broker-events.js";
import type { DeadLetters, MoveTarget } from "./dead-letters.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { QueueState } from "./queue-state.js";
import type { MoveTaskInfo } from "./types.js";

// Progress is written at most this often while a task runs: a bounded write
// cost at any rate, and a crash loses at most this much of the count (never
// a move: each is its own atomic batch).
const progressIntervalMs = 1000;

/** A task this broker is running now. */
interface Running {
  /** The task as last written. */
  stored: StoredMoveTask;
  /** Moved so far: the stored count and the moves since. */
  moved: number;
  lastWrite: number;
  /** Stops the redrive after its current batch. */
  readonly controller: AbortController;
  /** Set by cancel: ends CANCELLED. */
  cancelled: boolean;
  /** Set by stop (close, eviction, storage failure): ends writing nothing, to be resumed; why, for a cancel caught by it. */
  stopped: HoldshelfError | undefined;
  /** Settles when the task has ended and its end is written; rejects with a failed write. */
  done: Promise<void>;
}

/**
 * Message move tasks (SQS's StartMessageMoveTask): redrives that run in the
 * background. A task's state lives in its source queue's record (see
 * QueueRegistry.changeMoveTasks), so it survives restarts and, in cluster
 * mode, moves with the queue: whoever serves the queue next resumes its
 * running task from the stored count, moving only messages that arrived
 * by the task's start. Stopping (close, eviction, a storage failure) leaves
 * the stored status RUNNING for that reason.
 */
export class MoveTasks {
  private readonly running = new Map<QueueState, Running>();
  /** Tasks running or stopping, and end writes: what `settled` waits for. */
  private readonly pending = new Set<Promise<unknown>>();
  /** Set by close: no task starts or resumes here any more (a start racing the shutdown stays stored, for the next open). */
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly registry: QueueRegistry,
    private readonly deadLetters: DeadLetters,
    private readonly onError: (error: unknown) => void,
    private readonly events: BrokerEvents,
  ) {}

  /**
   * Starts a task on `source` (destination and rate already checked) once it
   * is stored; returns its handle. MOVE_TASK_RUNNING if one runs already.
   */
  async start(source: QueueState, destinationQueue: string, maxPerSecond: number): Promise<string> {
    const task: StoredMoveTask = {
      taskId: randomUUID(),
      status: "RUNNING",
      destinationQueue,
      maxPerSecond,
      movedCount: 0,
      toMoveCount: source.visibleCount,
      failureReason: "",
      startTime: this.clock.now(),
    };
    const stored = await this.registry.changeMoveTasks(source, (tasks) => {
      if (tasks.some(active)) {
        throw new HoldshelfError("MOVE_TASK_RUNNING", `queue "${source.record.name}" has a running message move task`);
      }
      return [task, ...tasks].slice(0, keptMoveTasks);
    });
    // Deleted, or gone to another broker meanwhile: the registry says which.
    if (!stored) throw this.goneError(source);
    this.run(source, task);
    return formatMoveTaskHandle(source.record.name, task.taskId);
  }

  /** A source queue's last `maxResults` tasks (1 to 10, 0 meaning 1, as SQS), newest first: a running one with its count so far. */
  list(source: QueueState, maxResults: number): MoveTaskInfo[] {
    if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > keptMoveTasks) {
      throw invalidArgument("max_results", `must be 0 (1) to ${keptMoveTasks}`);
    }
    const running = this.running.get(source);
    return (source.record.moveTasks ?? []).slice(0, maxResults || 1).map((task) => {
      const live = running?.stored.taskId === task.taskId ? running : undefined;
      const status: MoveTaskStatus = live?.cancelled ? "CANCELLING" : task.status;
      return {
        taskHandle: status === "RUNNING" ? formatMoveTaskHandle(source.record.name, task.taskId) : undefined,
        status,
        sourceQueue: source.record.name,
        destinationQueue: task.destinationQueue,
        maxPerSecond: task.maxPerSecond,
        movedCount: live?.moved ?? task.movedCount,
        toMoveCount: task.toMoveCount,
        failureReason: task.failureReason,
        startTime: task.startTime,
      };
    });
  }

  /**
   * Cancels the running task a handle names: it stops after its current
   * batch, ends CANCELLED, and this answers with how many it moved.
   * MOVE_TASK_NOT_FOUND if that task is not running.
   */
  async cancel(taskHandle: string): Promise<number> {
    const handle = parseMoveTaskHandle(taskHandle);
    if (handle === undefined) throw invalidArgument("task_handle", "is not a handle StartMessageMoveTask returned");
    const { taskId } = handle;
    let source: QueueState;
    try {
      source = this.registry.get(handle.sourceQueue, "task_handle");
    } catch (error) {
      // A deleted source queue took its tasks along; a queue moving away (cluster mode) answers as the registry does.
      if (error instanceof HoldshelfError && error.reason === "QUEUE_NOT_FOUND") throw moveTaskNotFound();
      throw error;
    }
    const running = this.running.get(source);
    if (running !== undefined && running.stored.taskId === taskId) {
      running.cancelled = true;
      running.controller.abort();
      await running.done;
      // Stopped meanwhile (shutdown, the queue moving, storage failing): nothing was written, the
      // task is still stored running, and the caller must not hear it was cancelled.
      if (running.stopped !== undefined) throw running.stopped;
      if (source.deleted) throw moveTaskNotFound();
      return running.moved;
    }
    // Stored as running but not running here: a storage failure stopped it and no reload has resumed it yet.
    const task = (source.record.moveTasks ?? []).find((candidate) => candidate.taskId === taskId);
    if (task === undefined || task.status !== "RUNNING" || running !== undefined) throw moveTaskNotFound();
    if (!(await this.write(source, { ...task, status: "CANCELLED" }))) throw this.goneError(source);
    return task.movedCount;
  }

  /**
   * Takes up the tasks of queues this broker starts to serve (at open, after
   * a storage outage, on adopting queues): running ones resume, one stopped
   * while cancelling ends CANCELLED.
   */
  resume(queues: Iterable<QueueState>): void {
    for (const queue of queues) {
      if (this.running.has(queue)) continue;
      const task = (queue.record.moveTasks ?? []).find(active);
      if (task?.status === "RUNNING") this.run(queue, task);
      else if (task !== undefined) this.track(this.write(queue, { ...task, status: "CANCELLED" }));
    }
  }

  /**
   * Stops the tasks of these queues (all, if unset) after their current
   * batch, leaving them stored as running; `reason` is what a cancel caught
   * by the stop fails with.
   */
  stop(reason: HoldshelfError, queues?: Iterable<QueueState>): void {
    for (const queue of queues ?? [...this.running.keys()]) {
      const running = this.running.get(queue);
      if (running === undefined) continue;
      running.stopped = reason;
      running.controller.abort();
    }
  }

  /** Stops every task, as stop does, and starts none from now on: the broker is shutting down. */
  close(reason: HoldshelfError): void {
    this.closed = true;
    this.stop(reason);
  }

  /** Resolves once every task stopped or ended so far has finished writing. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch(this.onError).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  private run(source: QueueState, stored: StoredMoveTask): void {
    // Stored as running: the next broker to open on the store resumes it.
    if (this.closed) return;
    const running: Running = {
      stored,
      moved: stored.movedCount,
      lastWrite: this.clock.now(),
      controller: new AbortController(),
      cancelled: false,
      stopped: undefined,
      done: Promise.resolve(),
    };
    this.running.set(source, running);
    running.done = this.moveAll(source, running).finally(() => this.running.delete(source));
    // A failure after a stop is the outage or shutdown that stopped the task: nothing more to report.
    this.track(
      running.done.catch((error: unknown) => (running.stopped !== undefined ? undefined : Promise.reject(error))),
    );
  }

  private async moveAll(source: QueueState, running: Running): Promise<void> {
    const { destinationQueue, maxPerSecond, startTime } = running.stored;
    let failure = "";
    for (;;) {
      const destination = destinationQueue === "" ? undefined : await this.deadLetters.find(destinationQueue);
      if (destinationQueue !== "" && destination === undefined) {
        failure = `destination queue "${destinationQueue}" does not exist`;
        break;
      }
      // The destination left this broker (deleted, or moved to another in cluster mode): look it up again.
      let lost = false;
      const retarget = new AbortController();
      const signal = AbortSignal.any([running.controller.signal, retarget.signal]);
      try {
        await this.deadLetters.redrive(source, destination, Infinity, maxPerSecond, signal, {
          enqueuedBy: startTime,
          onBatch: async (moved) => {
            running.moved += moved;
            this.events.movedByTask(source.record.name, moved);
            if (await this.isGone(destination, destinationQueue)) {
              lost = true;
              retarget.abort();
            } else if (this.clock.now() - running.lastWrite >= progressIntervalMs) {
              await this.progress(source, running, running.stored.status);
            }
          },
        });
      } catch (error) {
        if (running.stopped !== undefined || source.deleted) throw error;
        // Not a stop that someone resumes: the task ends FAILED, saying why, rather than
        // staying stored as running with nobody running it.
        this.onError(error);
        failure = `stopped by an error: ${error instanceof Error ? error.message : String(error)}`;
        break;
      }
      if (!lost || running.controller.signal.aborted) break;
    }
    // Deleted: its tasks went with its record. Stopped: the next owner resumes it.
    if (source.deleted || running.stopped !== undefined) return;
    const status = failure !== "" ? "FAILED" : running.cancelled ? "CANCELLED" : "COMPLETED";
    await this.progress(source, running, status, failure);
  }

  /** Writes a running task's count and status. */
  private async progress(
    source: QueueState,
    running: Running,
    status: MoveTaskStatus,
    failureReason = "",
  ): Promise<void> {
    running.lastWrite = this.clock.now();
    const task = { ...running.stored, status, movedCount: running.moved, failureReason };
    await this.write(source, task);
    running.stored = task;
  }

  /** Replaces a stored task by its new state, if the record still holds it; false if the queue is gone from here. */
  private write(source: QueueState, task: StoredMoveTask): Promise<boolean> {
    return this.registry.changeMoveTasks(source, (tasks) =>
      tasks.map((old) => (old.taskId === task.taskId ? task : old)),
    );
  }

  /**
   * Whether the destination went since it was looked up: a local one
   * deleted or moved away, or one another broker serves deleted there (its
   * inbox would drop what arrives). Checked after each batch, so at most one
   * batch goes to a queue deleted meanwhile.
   */
  private async isGone(destination: MoveTarget | undefined, name: string): Promise<boolean> {
    if (destination === undefined) return false;
    if (typeof destination !== "string") return destination.deleted;
    return (await this.deadLetters.find(name)) === undefined;
  }

  /** Why a queue's record could not be written: the registry's error for it (deleted, or served by another broker now). */
  private goneError(source: QueueState): Error {
    try {
      this.registry.get(source.record.name);
    } catch (error) {
      return error as Error;
    }
    return new HoldshelfError("QUEUE_NOT_FOUND", `queue "${source.record.name}" was deleted`);
  }
}

/** Whether a task holds its queue: only one such per source queue. */
function active(task: StoredMoveTask): boolean {
  return task.status === "RUNNING" || task.status === "CANCELLING";
}

/** Checks a task's rate: 0 (no limit) to maxMoveTaskRate a second. */
export function checkMoveTaskRate(maxPerSecond: number): void {
  if (!Number.isInteger(maxPerSecond) || maxPerSecond < 0 || maxPerSecond > maxMoveTaskRate) {
    throw invalidArgument("max_per_second", `must be 0 (no limit) to ${maxMoveTaskRate}`);
  }
}

/** MOVE_TASK_NOT_FOUND. */
function moveTaskNotFound(): HoldshelfError {
  return new HoldshelfError("MOVE_TASK_NOT_FOUND", "no running message move task has that handle");
}
