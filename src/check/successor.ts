/**
 * Successor states of the search: the state after one choice as a copy-on-write clone driven by
 * the machine's own `apply` (clone.ts), its actor, and the incremental update of its record
 * hashes (codec.ts), checked against a full recomputation under `verifyHash`.
 */
import type { Choice, MachineState } from '../machine/machine.js';
import type { Codec, Extra } from './codec.js';
import { cloneFor, freezeShared } from './clone.js';
import type { SearchCtx } from './search-ctx.js';
import { knownMismatch } from './warp-relative.js';

/** Successors of one search's states (`transitions`: how many were computed). */
export class Successors {
  /** Transitions taken (successors computed), forced steps included. */
  transitions = 0;

  constructor(private readonly ctx: SearchCtx, private readonly codec: Codec, private readonly verifyHash: boolean) {}

  /** The actor of choice `c` in `s`: the agent, or the issuer of the asynchronous operation. */
  actorOf(s: MachineState, c: Choice): number {
    return c.kind === 'agent' ? c.agent : this.ctx.m.findAsync(s, c.id)!.agent;
  }

  /**
   * `s` after choice `c` of actor `who` (a fresh partial copy; `s` is left unchanged), with the
   * step's output in the context's `out`; `opIdx`: the index of `c`'s op in `s.inflight`, when known.
   */
  succ(s: MachineState, c: Choice, who: number, opIdx = -1): MachineState {
    const { m, an, out } = this.ctx;
    if (c.kind === 'async' && opIdx < 0) {
      const fl = s.inflight;
      for (let i = 0; i < fl.length; i++) if (fl[i]!.id === c.id) {
        opIdx = i;
        break;
      }
    }
    if (this.verifyHash) freezeShared(s);
    const t = cloneFor(s, who, opIdx, an.usesNamed, m.barTouched(s, c), this.ctx.f.usesCluster);
    m.apply(t, c, out, undefined, true);
    this.transitions++;
    return t;
  }

  /**
   * Updates the record hashes after a step of `who` from `s` to `t` (checker data `px` to `nx`):
   * the actor's record, the records of agents whose commit ghosts or pending commits a phase
   * completion cleared, and the barrier sum.
   */
  rehash(s: MachineState, t: MachineState, px: Extra, nx: Extra, who: number, rh: Int32Array): void {
    const codec = this.codec;
    codec.barSum(s, t, rh);
    codec.record(t, nx, who, rh);
    if (nx.cghosts === px.cghosts && nx.pcm === px.pcm && nx.ru === px.ru) return;
    const n = this.ctx.p.agents.length;
    for (let a = 0; a < n; a++) if (a !== who && (nx.cghosts[a] !== px.cghosts[a] || nx.pcm[a] !== px.pcm[a] || nx.ru[a] !== px.ru[a])) codec.record(t, nx, a, rh);
  }

  /** Recomputes one record hash and checks it against the full hash (tests: `verifyHash`). */
  verify(t: MachineState, nx: Extra, rh: Int32Array): void {
    const full = new Int32Array(rh.length);
    this.codec.records(t, nx, full);
    for (let i = 0; i < rh.length; i++) if (full[i] !== rh[i]) throw new Error(`checker: incremental ${i < rh.length - 2 ? `record hash of agent ${i >> 1}` : 'barrier hash'} differs from the full hash`);
    const bad = knownMismatch(this.ctx.p, this.ctx.an.rel, t);
    if (bad) throw new Error(`checker: ${bad}`);
  }
}
