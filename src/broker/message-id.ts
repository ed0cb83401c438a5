import { randomBytes } from "node:crypto";

const randomBits = 74n;
const randomLimit = 1n << randomBits;
const lowBits = 62n;

let lastTime = 0;
let lastRandom = 0n;

/**
 * A new message id: 32 hex digits of a UUIDv7 (48 bits of milliseconds, then
 * 74 bits that start random each millisecond and count up within it), so ids
 * made by this process strictly increase. Ready-time ties are broken by id,
 * which keeps the messages of one SendBatch in entry order.
 */
export function newMessageId(nowMs: number): string {
  let time = Math.max(nowMs, lastTime);
  let random = time === lastTime ? lastRandom + 1n : freshRandom();
  if (random >= randomLimit) {
    time += 1;
    random = freshRandom();
  }
  lastTime = time;
  lastRandom = random;
  const randA = (random >> lowBits).toString(16).padStart(3, "0");
  const randB = random & ((1n << lowBits) - 1n);
  // The variant's two bits (10) sit above the low 62 random bits.
  const variantAndB = ((2n << lowBits) | randB).toString(16).padStart(16, "0");
  return `${time.toString(16).padStart(12, "0")}7${randA}${variantAndB}`;
}

/** A message id as users see it: the UUID form with dashes. */
export function formatMessageId(id: string): string {
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
}

function freshRandom(): bigint {
  // Start in the lower half, so a millisecond's count never runs out in practice.
  return BigInt("0x" + randomBytes(10).toString("hex")) & ((randomLimit >> 1n) - 1n);
}
