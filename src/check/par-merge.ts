/**
 * The main thread's side of a parallel level: the workers' results merged into the search tree.
 * New states are numbered in frontier-block order (the order the sequential search would number
 * them), their encodings written into the next frontier, their parents and forced chains appended
 * to the tree; per kind and place the hazard of the lowest state id is kept (the first found at it).
 */
import { MAX_HAZARDS, grow as growArray, type RawHazard } from './engine.js';
import type { LevelResult } from './par-protocol.js';

/** A frontier in shared memory: `n` states' encodings (`offs`: n + 1 entries), ids and record hashes. */
export interface Frontier {
  data: Int32Array;
  offs: Int32Array;
  ids: Int32Array;
  rh: Int32Array;
  n: number;
}

/** An Int32Array of `n` (at least 1) elements over a SharedArrayBuffer. */
export function sharedI32(n: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * Math.max(1, n)));
}

/** Bytes a frontier holds. */
export function frontierBytes(f: Frontier): number {
  return f.data.byteLength + f.offs.byteLength + f.ids.byteLength + f.rh.byteLength;
}

/** The new states of one level: (frontier block, worker, first, end) segments in block order, their count and encoded length. */
export interface LevelSizes {
  segs: [number, number, number, number][];
  count: number;
  dataLen: number;
}

/**
 * The search tree the main thread keeps across levels: each stored state's parent and forced chain
 * (`chainData[chainOff[i]]` is its length, then the choice codes), the counters, the hazards and
 * the arrivals that fed each phase (`fedBy`).
 */
export class SearchTree {
  parent = new Int32Array(1 << 14);
  chainOff = new Int32Array(1 << 14);
  chainData = new Int32Array(1 << 16);
  chainLen = 1;
  nStates = 1;
  transitions = 0;
  terminalOk = 0;
  intermediates = 0;
  readonly hazards = new Map<string, RawHazard>();
  readonly fedBy = new Map<number, Set<number>>();

  constructor(public errorFound: boolean, initHazards: readonly RawHazard[]) {
    this.parent[0] = -1;
    this.chainOff[0] = 0;
    this.chainData[0] = 0;
    for (const h of initHazards) this.hazards.set(h.key, h);
  }

  /** Bytes of the tree's arrays. */
  arraysBytes(): number {
    return this.parent.byteLength + this.chainOff.byteLength + this.chainData.byteLength;
  }

  /** Where the level's new states lie in the workers' results. */
  static sizes(results: readonly LevelResult[]): LevelSizes {
    const segs: [number, number, number, number][] = [];
    let count = 0;
    let dataLen = 0;
    results.forEach((r, w) => {
      const bl = r.blocks;
      for (let j = 0; j < bl.length; j += 2) {
        const end = j + 2 < bl.length ? bl[j + 3]! : r.parent.length;
        if (end > bl[j + 1]!) segs.push([bl[j]!, w, bl[j + 1]!, end]);
      }
      count += r.parent.length;
      dataLen += r.offs[r.offs.length - 1]!;
    });
    segs.sort((a, b) => a[0] - b[0]);
    return { segs, count, dataLen };
  }

  /**
   * Numbers the level's new states and appends them to the tree; returns the next frontier (in
   * shared memory, or, when `stopping`, only its offsets and ids: a stopped search needs no encodings).
   */
  addStates(results: readonly LevelResult[], { segs, count, dataLen }: LevelSizes, rhLen: number, stopping: boolean): Frontier {
    const next: Frontier = stopping
      ? { data: new Int32Array(0), offs: new Int32Array(count + 1), ids: new Int32Array(count), rh: new Int32Array(0), n: count }
      : { data: sharedI32(dataLen), offs: sharedI32(count + 1), ids: sharedI32(count), rh: sharedI32(count * rhLen), n: count };
    this.parent = growArray(this.parent, this.nStates + count);
    this.chainOff = growArray(this.chainOff, this.nStates + count);
    const { parent, chainOff } = this;
    let { chainData, chainLen, nStates } = this;
    let pos = 0;
    let k = 0;
    for (const [, w, start, end] of segs) {
      const r = results[w]!;
      const d0 = r.offs[start]!;
      if (!stopping) {
        next.data.set(r.data.subarray(d0, r.offs[end]!), pos);
        next.rh.set(r.rh.subarray(start * rhLen, end * rhLen), k * rhLen);
      }
      const c0 = r.chainOff[start]!;
      const c1 = r.chainOff[end]!;
      chainData = growArray(chainData, chainLen + (c1 - c0) + (end - start));
      for (let j = start; j < end; j++) {
        next.offs[k] = pos + r.offs[j]! - d0;
        next.ids[k] = nStates;
        parent[nStates] = r.parent[j]!;
        chainOff[nStates] = chainLen;
        const a = r.chainOff[j]!;
        const b = r.chainOff[j + 1]!;
        chainData[chainLen++] = b - a;
        for (let q = a; q < b; q++) chainData[chainLen++] = r.chainData[q]!;
        nStates++;
        k++;
      }
      pos += r.offs[end]! - d0;
    }
    next.offs[count] = pos;
    this.chainData = chainData;
    this.chainLen = chainLen;
    this.nStates = nStates;
    return next;
  }

  /** The level's hazards (per kind and place, the one of the lowest state id), its counters and fed-by sets. */
  addFindings(results: readonly LevelResult[]): void {
    const hazards = this.hazards;
    const best = new Map<string, { h: RawHazard; i: number }>();
    results.forEach((r) => r.hazards.forEach((h, i) => {
      if (hazards.has(h.key)) return;
      const b = best.get(h.key);
      if (!b || h.state < b.h.state) best.set(h.key, { h, i });
    }));
    for (const { h } of [...best.values()].sort((a, b) => a.h.state - b.h.state || a.i - b.i)) {
      if (hazards.size >= MAX_HAZARDS) break;
      hazards.set(h.key, h);
    }
    for (const r of results) {
      if (r.error) this.errorFound = true;
      this.transitions += r.transitions;
      this.terminalOk += r.terminalOk;
      this.intermediates += r.intermediates;
      for (const [key, v] of r.fedBy) {
        let f = this.fedBy.get(key);
        if (!f) this.fedBy.set(key, (f = new Set()));
        for (const x of v) f.add(x);
      }
    }
  }
}
