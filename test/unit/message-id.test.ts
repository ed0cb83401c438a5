import { describe, expect, it } from "vitest";
import { formatMessageId, newMessageId } from "../../src/broker/message-id.js";

describe("message ids", () => {
  it("are UUIDv7 hex: version 7 and variant 10", () => {
    const id = newMessageId(Date.UTC(2026, 0, 1));
    expect(id).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(formatMessageId(id)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("strictly increase within one millisecond and when the clock steps back", () => {
    const now = Date.UTC(2027, 0, 1);
    const ids = [newMessageId(now), newMessageId(now), newMessageId(now), newMessageId(now - 5000)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
