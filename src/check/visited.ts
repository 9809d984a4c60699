/** The sequential search's visited set of canonical state hashes (see codec.ts for the hashes). */
/**
 * Open-addressing set of 64-bit hashes (linear probing, load at most 1/2). One interleaved table
 * (h1, h2 per slot: 8 bytes, eight slots per cache line), so a probe touches one cache line. The
 * search needs only membership: no state id is kept (a state's id lives in the frontier).
 */
export class Visited {
  private slots: Int32Array;
  private mask: number;
  size = 0;
  /** Called with the bytes of the doubled table before it grows (it may throw to refuse). */
  guard: ((bytes: number) => void) | null = null;
  constructor(capacity = 1 << 16) {
    let c = 1;
    while (c < capacity * 2) c <<= 1;
    this.slots = new Int32Array(c * 2);
    this.mask = c - 1;
  }
  get bytes(): number {
    return this.slots.byteLength;
  }
  /** Bytes the table will hold once `n` more entries are added (it doubles at half load). */
  bytesAfter(n: number): number {
    let cap = this.mask + 1;
    let bytes = this.slots.byteLength;
    while ((this.size + n) * 2 > cap) {
      cap *= 2;
      bytes *= 2;
    }
    return bytes;
  }
  /** True when (h1, h2) is in the set (h2 ≠ 0). */
  has(h1: number, h2: number): boolean {
    const t = this.slots;
    h1 |= 0;
    h2 |= 0;
    let i = (h1 ^ Math.imul(h2, 0x9e3779b1)) & this.mask;
    for (;;) {
      const k2 = t[2 * i + 1]!;
      if (k2 === 0) return false;
      if (k2 === h2 && t[2 * i] === h1) return true;
      i = (i + 1) & this.mask;
    }
  }
  /** Inserts (h1, h2) (h2 ≠ 0); returns false when it was already present. */
  add(h1: number, h2: number): boolean {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const t = this.slots;
    h1 |= 0;
    h2 |= 0;
    let i = (h1 ^ Math.imul(h2, 0x9e3779b1)) & this.mask;
    for (;;) {
      const k2 = t[2 * i + 1]!;
      if (k2 === 0) {
        t[2 * i] = h1;
        t[2 * i + 1] = h2;
        this.size++;
        return true;
      }
      if (k2 === h2 && t[2 * i] === h1) return false;
      i = (i + 1) & this.mask;
    }
  }
  private grow(): void {
    const old = this.slots;
    const c = (this.mask + 1) * 2;
    this.guard?.(c * 8);
    const t = new Int32Array(c * 2);
    const mask = c - 1;
    for (let j = 0; j < old.length; j += 2) {
      const h2 = old[j + 1]!;
      if (h2 === 0) continue;
      const h1 = old[j]!;
      let i = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
      while (t[2 * i + 1] !== 0) i = (i + 1) & mask;
      t[2 * i] = h1;
      t[2 * i + 1] = h2;
    }
    this.slots = t;
    this.mask = mask;
  }
}
