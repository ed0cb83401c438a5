import { randomBytes } from "node:crypto";
import { readIdWords } from "../store/message-id-words.js";

// The id's 74 random bits, kept as numbers: 12 in the second word (after
// the version), 30 in the third (after the variant's two bits), 32 in the fourth.
const twoTo30 = 0x40000000;
const twoTo32 = 0x100000000;
// One buffer, reused: the id is read out of it as a string at once.
const words = new Uint32Array(4);

let lastTime = -1;
let randA = 0;
let randHigh = 0;
let randLow = 0;

/**
 * A new message id: 32 hex digits of a UUIDv7 (48 bits of milliseconds, then
 * 74 bits that start random each millisecond and count up within it), so ids
 * made by this process strictly increase. Ready-time ties are broken by id,
 * which keeps the messages of one SendBatch in entry order.
 */
export function newMessageId(nowMs: number): string {
  let time = Math.max(nowMs, lastTime);
  if (time === lastTime) countUp();
  else freshRandom();
  if (randA >= 0x1000) {
    // The millisecond's count ran out (never in practice: it starts in the lower half).
    time += 1;
    freshRandom();
  }
  lastTime = time;
  words[0] = Math.floor(time / 0x10000);
  words[1] = ((time % 0x10000) << 16) | 0x7000 | randA;
  // The variant's two bits (10) sit above the third word's 30 random bits.
  words[2] = (0x80000000 | randHigh) >>> 0;
  words[3] = randLow;
  return readIdWords(words, 0);
}

/** A message id as users see it: the UUID form with dashes. */
export function formatMessageId(id: string): string {
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
}

// The UUID form formatMessageId writes; upper-case digits are the same id.
const userFormPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The stored id of a message id as users see it (formatMessageId's form), or undefined if it is not one. */
export function parseMessageId(text: string): string | undefined {
  return userFormPattern.test(text) ? text.replaceAll("-", "").toLowerCase() : undefined;
}

function countUp(): void {
  randLow += 1;
  if (randLow < twoTo32) return;
  randLow = 0;
  randHigh += 1;
  if (randHigh < twoTo30) return;
  randHigh = 0;
  randA += 1;
}

function freshRandom(): void {
  const bytes = randomBytes(10);
  // randA starts in the lower half of its 12 bits, so a millisecond's count never runs out in practice.
  randA = bytes.readUInt16BE(0) & 0x7ff;
  randHigh = bytes.readUInt32BE(2) & (twoTo30 - 1);
  randLow = bytes.readUInt32BE(6);
}
