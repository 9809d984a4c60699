/**
 * The simulator's event queue and its seeded random numbers: a priority queue of (time, insertion
 * order) → payload, and mulberry32 for latency jitter.
 */

export { mulberry32 } from '../model/random.js';

/** A typed array twice as long holding the same elements first. */
function doubled<A extends Float64Array | Int32Array>(a: A): A {
  const b = new (a.constructor as new (n: number) => A)(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Priority queue of (time, insertion order) → payload: pops the smallest time, ties in insertion
 * order. Integer times within a window of {@link Queue.W} cycles from the cursor go to FIFO
 * buckets, one per cycle (a bucket's entries are in insertion order, so its head is its
 * minimum); every other time (far ahead, behind the cursor, fractional) goes to a 4-ary min-heap in
 * parallel typed arrays. A pop takes the smaller of the first bucket's head and the heap's top.
 */
export class Queue {
  static readonly W = 4096;
  // Buckets: first / last node of each cycle (ring indexed by time mod W), -1 when empty.
  private head = new Int32Array(Queue.W).fill(-1);
  private tail = new Int32Array(Queue.W);
  // Nodes: insertion number, payload, next node in the bucket (or in the free list).
  private nq = new Float64Array(1024);
  private nv = new Int32Array(1024);
  private nx = new Int32Array(1024);
  private nodes = 0;
  private free = -1;
  /** Every bucketed entry has a time in [cur, cur + W); no bucket before `cur` holds one. */
  private cur = 0;
  private near = 0;
  // Heap.
  private t = new Float64Array(1024);
  private q = new Float64Array(1024);
  private v = new Int32Array(1024);
  private n = 0;
  private seq = 0;
  /** Time of the entry {@link pop} returned last. */
  lastTime = 0;
  get size(): number {
    return this.n + this.near;
  }
  private grow(): void {
    this.t = doubled(this.t);
    this.q = doubled(this.q);
    this.v = doubled(this.v);
  }
  private growNodes(): void {
    this.nq = doubled(this.nq);
    this.nv = doubled(this.nv);
    this.nx = doubled(this.nx);
  }
  push(time: number, payload: number): void {
    const s = this.seq++;
    if (this.near === 0 && Math.floor(time) === time) this.cur = time;
    const d = time - this.cur;
    if (d >= 0 && d < Queue.W && Math.floor(time) === time) {
      let node = this.free;
      if (node >= 0) this.free = this.nx[node]!;
      else {
        if (this.nodes === this.nq.length) this.growNodes();
        node = this.nodes++;
      }
      this.nq[node] = s;
      this.nv[node] = payload;
      this.nx[node] = -1;
      const b = time & (Queue.W - 1);
      if (this.head[b] === -1) this.head[b] = node;
      else this.nx[this.tail[b]!] = node;
      this.tail[b] = node;
      this.near++;
      return;
    }
    this.heapPush(time, s, payload);
  }
  private heapPush(time: number, s: number, payload: number): void {
    if (this.n === this.t.length) this.grow();
    const t = this.t, q = this.q, v = this.v;
    let i = this.n++;
    // 4-ary heap: parent of i is (i - 1) >> 2.
    while (i > 0) {
      const p = (i - 1) >> 2;
      const tp = t[p]!;
      if (tp < time || (tp === time && q[p]! < s)) break;
      t[i] = tp;
      q[i] = q[p]!;
      v[i] = v[p]!;
      i = p;
    }
    t[i] = time;
    q[i] = s;
    v[i] = payload;
  }
  /** Pops the minimum; returns its payload and leaves its time in `lastTime`. */
  pop(): number {
    if (this.near > 0) {
      const head = this.head;
      const mask = Queue.W - 1;
      let cur = this.cur;
      while (head[cur & mask] === -1) cur++;
      this.cur = cur;
      const b = cur & mask;
      const node = head[b]!;
      const nq = this.nq[node]!;
      if (this.n === 0 || this.t[0]! > cur || (this.t[0] === cur && this.q[0]! > nq)) {
        head[b] = this.nx[node]!;
        this.nx[node] = this.free;
        this.free = node;
        this.near--;
        this.lastTime = cur;
        return this.nv[node]!;
      }
    }
    return this.heapPop();
  }
  private heapPop(): number {
    const t = this.t, q = this.q, v = this.v;
    const rv = v[0]!;
    this.lastTime = t[0]!;
    const n = --this.n;
    if (n > 0) {
      const lt = t[n]!, lq = q[n]!, lv = v[n]!;
      let i = 0;
      for (;;) {
        const first = 4 * i + 1;
        if (first >= n) break;
        // The smallest of up to four children.
        let c = first;
        let tc = t[first]!, qc = q[first]!;
        const last = first + 4 < n ? first + 4 : n;
        for (let k = first + 1; k < last; k++) {
          const tk = t[k]!;
          if (tk < tc || (tk === tc && q[k]! < qc)) {
            c = k;
            tc = tk;
            qc = q[k]!;
          }
        }
        if (tc > lt || (tc === lt && qc > lq)) break;
        t[i] = tc;
        q[i] = qc;
        v[i] = v[c]!;
        i = c;
      }
      t[i] = lt;
      q[i] = lq;
      v[i] = lv;
    }
    return rv;
  }
}
