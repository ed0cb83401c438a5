/** A seeded PRNG (mulberry32) with the few draws the crash harness needs. */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** An independent stream derived from this seed and a label, so streams do not shift each other. */
  fork(label: number): SeededRandom {
    return new SeededRandom(Math.imul(this.state ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(label + 1, 0x85ebca6b));
  }
}
