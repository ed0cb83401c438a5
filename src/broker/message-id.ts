import { randomFillSync } from "node:crypto";

const random = new Uint8Array(16);

/**
 * A new message id: 32 hex digits of a UUIDv7 (48 bits of milliseconds, then
 * random bits), so ids sort roughly by creation time and never collide.
 */
export function newMessageId(nowMs: number): string {
  randomFillSync(random);
  const time = nowMs.toString(16).padStart(12, "0").slice(-12);
  const hex = Buffer.from(random).toString("hex");
  // Version 7 in the 13th digit; variant 10 in the top bits of the 17th.
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${time}7${hex.slice(13, 16)}${variant}${hex.slice(17, 32)}`;
}

/** A message id as users see it: the UUID form with dashes. */
export function formatMessageId(id: string): string {
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
}
