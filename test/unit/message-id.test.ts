import { describe, expect, it } from "vitest";
import { formatMessageId, newMessageId, parseMessageId } from "../../src/broker/message-id.js";

describe("message ids", () => {
  it("are UUIDv7 hex: version 7 and variant 10", () => {
    const id = newMessageId(Date.UTC(2026, 0, 1));
    expect(id).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(formatMessageId(id)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("carry their millisecond in their first 48 bits, and count up from a random start within it", () => {
    const now = Date.UTC(2027, 5, 1, 12, 0, 0, 123);
    const ids = Array.from({ length: 1000 }, () => newMessageId(now));
    for (const id of ids) expect(parseInt(id.slice(0, 12), 16)).toBe(now);
    // randA (12 bits after the version digit), then the 62 bits below the variant's two.
    const low = (id: string): bigint =>
      (BigInt(`0x${id.slice(13, 16)}`) << 62n) | (BigInt(`0x${id.slice(16)}`) & ((1n << 62n) - 1n));
    // Each id is the one before plus one in its 74 random bits (the variant's bits set aside).
    const steps = ids.slice(1).map((id, index) => low(id) - low(ids[index]!));
    expect(new Set(steps)).toEqual(new Set([1n]));
  });

  it("strictly increase within one millisecond and when the clock steps back", () => {
    const now = Date.UTC(2027, 0, 1);
    const ids = [newMessageId(now), newMessageId(now), newMessageId(now), newMessageId(now - 5000)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("parse back from the form users see, in either case; anything else is no id", () => {
    const id = newMessageId(Date.UTC(2026, 0, 1));
    expect(parseMessageId(formatMessageId(id))).toBe(id);
    expect(parseMessageId(formatMessageId(id).toUpperCase())).toBe(id);
    for (const text of [
      "",
      id,
      ` ${formatMessageId(id)}`,
      `${formatMessageId(id)}0`,
      "0190a6b2-0000-7000-8000-00000000000g",
    ]) {
      expect(parseMessageId(text), text).toBeUndefined();
    }
  });
});
