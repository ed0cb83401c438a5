import type { StorageLifecycle } from "../broker/broker-slices.js";
import type { Clock, Timer } from "../time/clock.js";
import type { StoredState } from "../store/store.js";
import type { HoldshelfError } from "../errors/holdshelf-error.js";
import type { HealthStatus } from "../grpc/health-service.js";
import type { Logger } from "../logging/logger.js";
import type { StorageMetrics } from "../metrics/storage-metrics.js";
import type { RecoverableStore } from "../store/recoverable-store.js";
import { storageUnavailable } from "../store/storage-unavailable.js";

/** What a StorageRecovery does; it knows nothing of LevelDB, gRPC or metrics itself. */
export interface StorageRecoveryOptions<T> {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Storage failed: stop serving what needs it. Called once per outage. */
  readonly suspend: (error: HoldshelfError) => void;
  /** One attempt to get storage back (reopen, prove a write lands, load); rejects while it still fails. */
  readonly reopen: () => Promise<T>;
  /** Storage is back: rebuild from what `reopen` loaded and serve again. */
  readonly resume: (loaded: T) => void;
  /** First wait before an attempt, doubled after each failed one up to `maxBackoffMs`. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

interface Outage {
  readonly since: number;
  /** The cause last logged, by its client message (the raw one names changing files). */
  reportedReason: string;
  attempts: number;
  backoffMs: number;
  timer: Timer | undefined;
}

// Short enough that a disk freed by an operator serves again within seconds;
// long enough that a disk that stays full costs a reopen every few seconds.
const defaultInitialBackoffMs = 100;
const defaultMaxBackoffMs = 2000;
// An outage that starts this soon after the last one ended continues its
// backoff: a disk at the edge of full must not make the broker flap (and log
// two lines) every 100 ms.
const flapWindowMs = 60_000;

/**
 * The storage state machine: available, then (on a failed write) down, with
 * attempts to reopen on a backoff until one succeeds, then available again.
 * It logs one error line when storage goes down and one info line when it is
 * back, whatever the number of calls refused or attempts made in between.
 */
export class StorageRecovery<T> {
  private outage: Outage | undefined;
  private lastOutage: { endedAt: number; backoffMs: number } | undefined;
  private attempt: Promise<void> | undefined;
  private stopped = false;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(private readonly options: StorageRecoveryOptions<T>) {
    this.initialBackoffMs = options.initialBackoffMs ?? defaultInitialBackoffMs;
    this.maxBackoffMs = options.maxBackoffMs ?? defaultMaxBackoffMs;
  }

  /** Whether storage takes writes (no outage under way). */
  get available(): boolean {
    return this.outage === undefined;
  }

  /** A write failed: goes down (unless already down) and starts recovering. */
  failed(error: unknown): void {
    if (this.stopped || this.outage !== undefined) return;
    const unavailable = storageUnavailable(error);
    const now = this.options.clock.now();
    const last = this.lastOutage;
    const backoffMs =
      last !== undefined && now - last.endedAt < flapWindowMs
        ? Math.min(last.backoffMs * 2, this.maxBackoffMs)
        : this.initialBackoffMs;
    this.outage = { since: now, reportedReason: unavailable.message, attempts: 0, backoffMs, timer: undefined };
    this.options.logger.error("storage unavailable: refusing calls that need it until writes succeed again", {
      reason: unavailable.message,
      error: unavailable.cause ?? error,
    });
    this.options.suspend(unavailable);
    this.schedule(this.outage);
  }

  /** Stops recovering (the server shuts down); waits for an attempt under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.outage?.timer?.cancel();
    await this.attempt;
  }

  private schedule(outage: Outage): void {
    outage.timer = this.options.clock.setTimer(outage.backoffMs, () => {
      outage.timer = undefined;
      this.attempt = this.tryRecover(outage).finally(() => (this.attempt = undefined));
    });
  }

  private async tryRecover(outage: Outage): Promise<void> {
    if (this.stopped) return;
    outage.attempts++;
    try {
      const loaded = await this.options.reopen();
      if (this.stopped) return;
      // Inside the try: memory that cannot be rebuilt from what was loaded is one more failed attempt.
      this.options.resume(loaded);
    } catch (error) {
      if (this.stopped) return;
      // A disk that stays full must not flood the log: an attempt that fails
      // as the last one did logs at debug, one that finds a new cause at warn.
      const reason = storageUnavailable(error).message;
      const level = reason === outage.reportedReason ? "debug" : "warn";
      outage.reportedReason = reason;
      this.options.logger[level]("storage recovery attempt failed", { attempt: outage.attempts, reason, error });
      outage.backoffMs = Math.min(outage.backoffMs * 2, this.maxBackoffMs);
      return this.schedule(outage);
    }
    const now = this.options.clock.now();
    this.outage = undefined;
    this.lastOutage = { endedAt: now, backoffMs: outage.backoffMs };
    this.options.logger.info("storage available again", {
      downSeconds: (now - outage.since) / 1000,
      attempts: outage.attempts,
    });
  }
}

/** What superviseStorage wires together. */
export interface SupervisedStorage {
  readonly store: RecoverableStore;
  readonly broker: StorageLifecycle;
  readonly health: HealthStatus;
  readonly metrics: StorageMetrics;
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * Puts a broker's storage under a StorageRecovery: on a failed write the
 * broker refuses calls with STORAGE_UNAVAILABLE, health reports NOT_SERVING
 * and the availability gauge reads 0; each attempt reopens the store, proves
 * a write lands and loads it; the broker then rebuilds its memory from disk
 * (dropping changes that were never written) and serves again.
 */
export function superviseStorage(parts: SupervisedStorage): StorageRecovery<StoredState> {
  const { store, broker, health, metrics } = parts;
  return new StorageRecovery<StoredState>({
    clock: parts.clock,
    logger: parts.logger,
    ...(store.maxRecoveryBackoffMs === undefined ? {} : { maxBackoffMs: store.maxRecoveryBackoffMs }),
    suspend(error) {
      metrics.setAvailable(false);
      health.setNotServing();
      broker.suspend(error);
    },
    async reopen() {
      await store.reopen();
      await store.probeWrite();
      return store.load();
    },
    resume(stored) {
      // Writes first: the reload's own first steps (leases that ran out during
      // the outage expire at once) write, and a refused write there would
      // leave memory ahead of disk. Nothing else can write yet: the old
      // memory's store is revoked, and the broker refuses calls until reloaded.
      store.resumeWrites();
      broker.reload(stored);
      metrics.setAvailable(true);
      health.setServing();
    },
  });
}
