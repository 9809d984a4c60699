/**
 * The sequential search's tree of stored states, from which counterexample traces are rebuilt
 * (check.ts): per state id its parent id and the chain of choices leading from the parent (the
 * explored choice, then the forced steps), `chainData[chainOff[id]]` being the chain's length,
 * then the choice codes ({@link encodeChoice}).
 */
import type { Choice } from '../machine/machine.js';
import { encodeChoice, grow } from './engine.js';

/** Parent and chain per stored state (the tables grow by doubling). */
export class StateTree {
  parent = new Int32Array(1 << 14);
  chainOff = new Int32Array(1 << 14);
  chainData = new Int32Array(1 << 16);
  private chainLen = 0;
  /** States stored. */
  n = 0;

  /** Stores a state reached from `par` (-1 for the initial state) by `chain`; returns its id. */
  add(par: number, chain: readonly Choice[]): number {
    const id = this.n++;
    this.parent = grow(this.parent, this.n);
    this.chainOff = grow(this.chainOff, this.n);
    this.chainData = grow(this.chainData, this.chainLen + chain.length + 1);
    this.parent[id] = par;
    this.chainOff[id] = this.chainLen;
    this.chainData[this.chainLen++] = chain.length;
    for (const c of chain) this.chainData[this.chainLen++] = encodeChoice(c);
    return id;
  }

  /** Bytes of the tables. */
  get bytes(): number {
    return this.parent.byteLength + this.chainOff.byteLength + this.chainData.byteLength;
  }
}
