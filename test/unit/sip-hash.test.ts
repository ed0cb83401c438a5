import { describe, expect, it } from "vitest";
import { sipHash24, sipHashKey } from "../../src/broker/sip-hash.js";

// The reference implementation's vectors (SipHash-2-4, 64-bit output): key
// 00 01 .. 0f, and inputs 00 01 .. (n-1) for n = 0..63, as little-endian
// 64-bit values. A selection covering every length class mod 8, empty input,
// one and several whole words.
const vectors: ReadonlyMap<number, bigint> = new Map([
  [0, 0x726fdb47dd0e0e31n],
  [1, 0x74f839c593dc67fdn],
  [2, 0x0d6c8009d9a94f5an],
  [3, 0x85676696d7fb7e2dn],
  [4, 0xcf2794e0277187b7n],
  [5, 0x18765564cd99a68dn],
  [6, 0xcbc9466e58fee3cen],
  [7, 0xab0200f58b01d137n],
  [8, 0x93f5f5799a932462n],
  [15, 0xa129ca6149be45e5n],
  [16, 0x3f2acc7f57c29bdbn],
  [24, 0xb8ad50c6f649af94n],
  [25, 0xbce192de8a85b8ean],
  [27, 0x2f2e6163076bcfadn],
  [63, 0x958a324ceb064572n],
]);

const key = sipHashKey(Uint8Array.from({ length: 16 }, (_, i) => i));

function hashOf(length: number): bigint {
  const out = Buffer.alloc(8);
  sipHash24(
    key,
    Uint8Array.from({ length }, (_, i) => i),
    out,
  );
  return out.readBigUInt64LE(0);
}

describe("SipHash-2-4", () => {
  it.each([...vectors])("matches the reference vector for %i bytes", (length, expected) => {
    expect(hashOf(length).toString(16)).toBe(expected.toString(16));
  });

  it("writes at the offset it is given and nowhere else", () => {
    const out = Buffer.alloc(12, 0xaa);
    sipHash24(key, new Uint8Array(0), out, 2);
    expect(out.subarray(0, 2)).toEqual(Buffer.from([0xaa, 0xaa]));
    expect(out.subarray(10)).toEqual(Buffer.from([0xaa, 0xaa]));
    expect(out.readBigUInt64LE(2)).toBe(vectors.get(0));
  });

  it("depends on every key byte", () => {
    const data = Uint8Array.from({ length: 25 }, (_, i) => i);
    const base = Buffer.alloc(8);
    sipHash24(key, data, base);
    for (let byte = 0; byte < 16; byte++) {
      const changed = Uint8Array.from({ length: 16 }, (_, i) => (i === byte ? i ^ 1 : i));
      const out = Buffer.alloc(8);
      sipHash24(sipHashKey(changed), data, out);
      expect(out.equals(base)).toBe(false);
    }
  });

  it("refuses a key that is not 16 bytes", () => {
    expect(() => sipHashKey(new Uint8Array(15))).toThrow(RangeError);
  });
});
