import { status } from "@grpc/grpc-js";
import { RpcError } from "../src/client/rpc-error.js";

/** What the clients saw in one interval of a soak. */
export interface IntervalCounts {
  /** Messages whose SendBatch returned OK. */
  sent: number;
  /** Messages whose delete returned OK. */
  deleted: number;
  /** Send-to-receive milliseconds of each first delivery. */
  readonly latenciesMs: number[];
  /** First deliveries left undeleted on purpose, to come back. */
  dropped: number;
  /** Deliveries after the first. */
  redeliveries: number;
  /** Heartbeat renewals answered held=true. */
  renewals: number;
  /** Failures nobody provoked, by "CODE reason" (or a description); the verdict wants none. */
  readonly errors: Record<string, number>;
  /** Failures the soak provokes on purpose, by "CODE reason". */
  readonly provoked: Record<string, number>;
}

/** Counts of the running interval, and of the whole run. */
export class SoakTally {
  private counts = emptyCounts();
  readonly total = emptyCounts();

  /** Adds to a counter of the interval and the total. */
  add(field: "sent" | "deleted" | "dropped" | "redeliveries" | "renewals", count = 1): void {
    this.counts[field] += count;
    this.total[field] += count;
  }

  /** Records a first delivery's latency. */
  latency(ms: number): void {
    this.counts.latenciesMs.push(ms);
  }

  /** Records a failure nobody provoked: an error thrown by a call, or a description. */
  error(failure: unknown): void {
    const key = describeFailure(failure);
    bump(this.counts.errors, key);
    bump(this.total.errors, key);
  }

  /** Records a failure the soak provoked on purpose. */
  provoked(failure: unknown): void {
    const key = describeFailure(failure);
    bump(this.counts.provoked, key);
    bump(this.total.provoked, key);
  }

  /** The interval's counts; a new interval starts. */
  takeInterval(): IntervalCounts {
    const counts = this.counts;
    this.counts = emptyCounts();
    return counts;
  }
}

/** "CODE reason" of an RpcError (or of a gRPC status), else the failure's text. */
export function describeFailure(failure: unknown): string {
  if (failure instanceof RpcError)
    return `${status[failure.code] ?? failure.code}${failure.reason ? ` ${failure.reason}` : ""}`;
  if (typeof failure === "string") return failure;
  return failure instanceof Error ? failure.message : String(failure);
}

function emptyCounts(): IntervalCounts {
  return { sent: 0, deleted: 0, latenciesMs: [], dropped: 0, redeliveries: 0, renewals: 0, errors: {}, provoked: {} };
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}
