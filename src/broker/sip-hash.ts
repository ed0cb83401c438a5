/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudorandom function
 * built for short inputs, whose 64-bit output serves as a MAC. Written here
 * in 32-bit halves because a receipt handle is checked on every Delete and
 * issued on every delivery: Node's createHmac costs about 3 µs a call in
 * object set-up alone, this about a tenth of that, with no allocation.
 * Checked against the reference test vectors in test/unit/sip-hash.test.ts.
 */

/** A SipHash key: 16 bytes, as four little-endian 32-bit words. */
export interface SipHashKey {
  readonly k0lo: number;
  readonly k0hi: number;
  readonly k1lo: number;
  readonly k1hi: number;
}

/** Reads a 16-byte key. */
export function sipHashKey(key: Uint8Array): SipHashKey {
  if (key.length !== 16) throw new RangeError(`a SipHash key is 16 bytes, not ${key.length}`);
  const view = new DataView(key.buffer, key.byteOffset, 16);
  return {
    k0lo: view.getUint32(0, true),
    k0hi: view.getUint32(4, true),
    k1lo: view.getUint32(8, true),
    k1hi: view.getUint32(12, true),
  };
}

/** Little-endian 32-bit word of `data` at `at`. */
function word(data: Uint8Array, at: number): number {
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0;
}

/**
 * SipHash-2-4 of `data`, written as 8 little-endian bytes (the reference
 * implementation's byte order) into `out` at `outOffset`.
 */
export function sipHash24(key: SipHashKey, data: Uint8Array, out: Uint8Array, outOffset = 0): void {
  // The state v0..v3 as high and low 32-bit halves, in locals: V8 keeps them
  // in registers, which module or object state would not allow.
  // "somepseudorandomlygeneratedbytes" are the initialisation constants.
  let v0h = (key.k0hi ^ 0x736f6d65) >>> 0;
  let v0l = (key.k0lo ^ 0x70736575) >>> 0;
  let v1h = (key.k1hi ^ 0x646f7261) >>> 0;
  let v1l = (key.k1lo ^ 0x6e646f6d) >>> 0;
  let v2h = (key.k0hi ^ 0x6c796765) >>> 0;
  let v2l = (key.k0lo ^ 0x6e657261) >>> 0;
  let v3h = (key.k1hi ^ 0x74656462) >>> 0;
  let v3l = (key.k1lo ^ 0x79746573) >>> 0;
  const length = data.length;
  const whole = length - (length % 8);
  // One step per 64-bit word (the last holds the remaining bytes and the
  // length's low byte on top), then one for finalisation: 2 SipRounds per
  // word, 4 to finish.
  for (let at = 0; at <= whole + 8; at += 8) {
    const finishing = at > whole;
    let mh = 0;
    let ml = 0;
    if (at < whole) {
      ml = word(data, at);
      mh = word(data, at + 4);
    } else if (!finishing) {
      mh = (length & 0xff) << 24;
      for (let i = whole; i < length; i++) {
        const shift = (i - whole) * 8;
        if (shift < 32) ml |= data[i]! << shift;
        else mh |= data[i]! << (shift - 32);
      }
      mh >>>= 0;
      ml >>>= 0;
    }
    if (finishing) {
      v2l = (v2l ^ 0xff) >>> 0;
    } else {
      v3h = (v3h ^ mh) >>> 0;
      v3l = (v3l ^ ml) >>> 0;
    }
    for (let round = finishing ? 4 : 2; round > 0; round--) {
      let lo: number;
      let hi: number;
      // v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
      lo = (v0l + v1l) >>> 0;
      v0h = (v0h + v1h + (lo < v0l ? 1 : 0)) >>> 0;
      v0l = lo;
      hi = ((v1h << 13) | (v1l >>> 19)) >>> 0;
      lo = ((v1l << 13) | (v1h >>> 19)) >>> 0;
      v1h = (hi ^ v0h) >>> 0;
      v1l = (lo ^ v0l) >>> 0;
      hi = v0h;
      v0h = v0l;
      v0l = hi;
      // v2 += v3; v3 = rotl(v3, 16); v3 ^= v2
      lo = (v2l + v3l) >>> 0;
      v2h = (v2h + v3h + (lo < v2l ? 1 : 0)) >>> 0;
      v2l = lo;
      hi = ((v3h << 16) | (v3l >>> 16)) >>> 0;
      lo = ((v3l << 16) | (v3h >>> 16)) >>> 0;
      v3h = (hi ^ v2h) >>> 0;
      v3l = (lo ^ v2l) >>> 0;
      // v0 += v3; v3 = rotl(v3, 21); v3 ^= v0
      lo = (v0l + v3l) >>> 0;
      v0h = (v0h + v3h + (lo < v0l ? 1 : 0)) >>> 0;
      v0l = lo;
      hi = ((v3h << 21) | (v3l >>> 11)) >>> 0;
      lo = ((v3l << 21) | (v3h >>> 11)) >>> 0;
      v3h = (hi ^ v0h) >>> 0;
      v3l = (lo ^ v0l) >>> 0;
      // v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
      lo = (v2l + v1l) >>> 0;
      v2h = (v2h + v1h + (lo < v2l ? 1 : 0)) >>> 0;
      v2l = lo;
      hi = ((v1h << 17) | (v1l >>> 15)) >>> 0;
      lo = ((v1l << 17) | (v1h >>> 15)) >>> 0;
      v1h = (hi ^ v2h) >>> 0;
      v1l = (lo ^ v2l) >>> 0;
      hi = v2h;
      v2h = v2l;
      v2l = hi;
    }
    if (!finishing) {
      v0h = (v0h ^ mh) >>> 0;
      v0l = (v0l ^ ml) >>> 0;
    }
  }
  const hi = (v0h ^ v1h ^ v2h ^ v3h) >>> 0;
  const lo = (v0l ^ v1l ^ v2l ^ v3l) >>> 0;
  for (let i = 0; i < 4; i++) {
    out[outOffset + i] = (lo >>> (8 * i)) & 0xff;
    out[outOffset + 4 + i] = (hi >>> (8 * i)) & 0xff;
  }
}
