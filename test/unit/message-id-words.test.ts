import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newMessageId } from "../../src/broker/message-id.js";
import { readIdWords, writeIdWords } from "../../src/store/message-id-words.js";
import { ScheduleColumns } from "../../src/store/schedule-columns.js";

describe("message ids as four 32-bit words", () => {
  it("turns any 16 bytes' hex into words and back unchanged, in byte order", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const id = Buffer.from(bytes).toString("hex");
        const words = new Uint32Array(6);
        expect(writeIdWords(id, words, 1)).toBe(true);
        expect([...words.subarray(1, 5)]).toEqual(
          [0, 4, 8, 12].map((offset) => Buffer.from(bytes).readUInt32BE(offset)),
        );
        expect(readIdWords(words, 1)).toBe(id);
      }),
    );
    const id = newMessageId(Date.now());
    const words = new Uint32Array(4);
    writeIdWords(id, words, 0);
    expect(readIdWords(words, 0)).toBe(id);
  });

  it("refuses what is not 32 lowercase hex digits", () => {
    const words = new Uint32Array(4);
    const good = "0123456789abcdef0123456789abcdef";
    for (const bad of [
      "",
      good.slice(1),
      `${good}0`,
      good.toUpperCase(),
      `${good.slice(0, 31)}g`,
      `${good.slice(0, 31)}é`,
      `-${good.slice(1)}`,
    ]) {
      expect(writeIdWords(bad, words, 0), bad).toBe(false);
    }
    expect(() =>
      ScheduleColumns.of([
        {
          id: "not-an-id",
          readyAt: 0,
          leased: false,
          receiveCount: 0,
          epoch: 0,
          sendTime: 0,
          enqueuedAt: 0,
          firstReceiveAt: 0,
          leaseStart: 0,
          size: 0,
          hasCheckpoint: false,
        },
      ]),
    ).toThrow(/message id "not-an-id" is not 32 lowercase hex digits/);
  });
});
