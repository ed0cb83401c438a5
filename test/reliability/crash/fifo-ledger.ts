import { Ledger, type DeliveryRecord, type SendRecord } from "./ledger.js";

/**
 * Why a FIFO send was made: a message's first send, a retry of a send whose
 * outcome was unknown (the broker was killed mid-call), or a deliberate
 * repeat of a send already acknowledged, as a client that timed out would.
 */
export type FifoAttempt = "first" | "retry" | "repeat";

/** One message in a FIFO send; `uid` names its group and counter (fifoUid), so the shared checks see a retry as the same body. */
export interface FifoSendRecord extends SendRecord {
  readonly group: string;
  readonly counter: number;
  readonly attempt: FifoAttempt;
  /** The broker's answer, known only when acknowledged. */
  readonly sequenceNumber: string | undefined;
  /** The broker life (index into `lives`) the call was made in. */
  readonly life: number;
}

/** One delivery from a FIFO queue, with what the body and the message's FIFO fields said. */
export interface FifoDeliveryRecord extends DeliveryRecord {
  readonly group: string;
  readonly counter: number;
  readonly messageGroupId: string;
  readonly sequenceNumber: string;
  readonly deduplicationId: string;
  /** Which Receive answer it came in (numbered per call), and its place in that answer. */
  readonly receive: number;
  readonly position: number;
}

/**
 * The mixed run's ledger (ledger.ts) with FIFO records in it: the shared
 * checks (invariants.ts) read it as they read the mixed run's, and the FIFO
 * checks (fifo-invariants.ts) read the FIFO fields too.
 */
export class FifoLedger extends Ledger {
  override readonly sends: FifoSendRecord[] = [];
  override readonly deliveries: FifoDeliveryRecord[] = [];
  private receives = 0;

  /** A number for the next Receive answer. */
  nextReceive(): number {
    return this.receives++;
  }

  /** The index of the broker life now running. */
  get life(): number {
    return this.lives.length - 1;
  }
}
