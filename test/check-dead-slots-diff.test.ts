// The differential check of the dead-register reduction (src/check/dead-slots.ts): the PTX kernels
// whose warps the warp-relative analysis gives up on (the persistent GEMM's 8 consumer warps, the
// large fixtures) and the persistent kernel's planted twins, checked `--all --strict` with the
// reduction on and off: the same verdict, the same (kind, subject) of every hazard and warning,
// the same final states up to the dead slots, and no more states with it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyse } from '../src/check/analysis.js';
import { Codec } from '../src/check/codec.js';
import { explore } from '../src/check/explore.js';
import { check } from '../src/check/index.js';
import { initialExtra } from '../src/check/search.js';
import { StateBuf } from '../src/check/state-buf.js';
import { warpRelative } from '../src/check/warp-relative.js';
import { Machine, type MachineState } from '../src/machine/machine.js';
import { BUILTINS, instantiate, type Program } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';

function load(f: string, src = readFileSync(f, 'utf8')): Program {
  const line = /\/\/ # launch: (.*)/.exec(src);
  let launch: PtxLaunch = line ? JSON.parse(line[1]!) : {};
  if (existsSync(`${f}.launch.json`)) launch = { ...launch, ...JSON.parse(readFileSync(`${f}.launch.json`, 'utf8')) };
  const r = parsePtx(src, f);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}

/** A final state as text: per agent its status, pc and the frame slots the reduction keeps there. */
function finalText(p: Program, s: MachineState, warpRelative = true): string {
  const an = analyse(p, { warpRelative, ctaSymmetry: warpRelative });
  const agents = s.agents.map((a, i) => {
    const live = an.rel[i]?.live[a.pc];
    return `${a.status}:${a.pc}:${(live ? [...live].map((j) => a.frame[j]) : a.frame.slice(BUILTINS.length)).join(',')}`;
  });
  return `${agents.join('|')} ; ${s.bars.map((b) => `${b.status}/${b.phase}/${b.pending}/${b.expected}/${b.tx}`).join(' ')}`;
}

function outcome(p: Program, deadSlots: boolean) {
  const finals = new Set<string>();
  const r = check(p, { all: true, strict: true, deadSlots, maxStates: 150_000, timeout: 300_000, onTerminal: (s) => finals.add(finalText(p, s)) });
  const key = (h: { kind: string; subject: { name: string } | null }) => `${h.kind}|${h.subject?.name ?? ''}`;
  return { verdict: r.verdict, complete: r.complete, states: r.coverage.states, hazards: [...new Set([...r.hazards, ...r.warnings].map(key))].sort(), finals: [...finals].sort() };
}

/** The agents whose warp-relative analysis gave up, i.e. the ones the reduction serves. */
const givenUp = (p: Program) => p.agents.filter((a) => p.roles[a.role]!.decl.asWritten && !warpRelative(p, p.roles[a.role]!, a)).map((a) => a.id);

const PERSISTENT = 'hw/kernels/persistent.ptx';
const FILES = [PERSISTENT, 'hw/kernels/persistent.bug1.ptx', 'hw/kernels/persistent.bug2.ptx', 'hw/kernels/persistent.bug3.ptx',
  'test/fixtures/ptx/mixed.ptx', 'test/fixtures/ptx/rtoffset.ptx', 'test/fixtures/ptx/wgmma.ptx'];

describe('dead registers of unanalysed warps: the facts', () => {
  it('the persistent GEMM\'s consumer warps fall back to the liveness, which keeps a small part of the frame', () => {
    const p = load(PERSISTENT);
    expect(givenUp(p)).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
    const on = analyse(p);
    const off = analyse(p, { deadSlots: false });
    for (const a of [4, 5, 6, 7, 8, 9, 10, 11]) {
      expect(off.rel[a]).toBeNull();
      const r = on.rel[a]!;
      expect(r.knownUpTo).toBe(BUILTINS.length);
      const n = p.roles[p.agents[a]!.role]!.slots.length;
      const rests = r.live.filter((l) => l !== undefined);
      expect(rests.length).toBeGreaterThan(50);
      // At most a quarter of the 1,162 slots live anywhere the warp rests (249 at the most).
      expect(Math.max(...rests.map((l) => l!.length))).toBeLessThan(n / 4);
      // The builtins are known from the agent (its warp index among them), not stored.
      expect(r.known[rests.length ? r.live.findIndex((l) => l) : 0]!.slice(0, BUILTINS.length)).toEqual(new Machine(p).initial().agents[a]!.frame.slice(0, BUILTINS.length));
    }
    // The producer warps 0-3 keep their warp-relative facts.
    for (const a of [0, 1, 2, 3]) expect(on.rel[a]!.knownUpTo).toBeUndefined();
  });

  it('the stored encoding of the initial state shrinks and decodes to it, dead slots as 0', () => {
    const p = load(PERSISTENT);
    const s0 = new Machine(p).initial();
    const size = (deadSlots: boolean) => {
      const an = analyse(p, { deadSlots });
      const buf = new StateBuf();
      const codec = new Codec(p, an, s0);
      codec.encode(s0, initialExtra(p, an), buf, 0);
      const back = codec.decode(buf, 0).s;
      expect(back.agents.map((a) => a.pc)).toEqual(s0.agents.map((a) => a.pc));
      // Each agent rests on its first operation: the builtins and the live slots come back, a dead slot as 0.
      let zeroed = 0;
      s0.agents.forEach((ag, a) => {
        const r = an.rel[a];
        const keep = new Set(r ? r.live[ag.pc]! : ag.frame.keys());
        ag.frame.forEach((v, j) => {
          const want = j < BUILTINS.length || keep.has(j) || !r?.knownUpTo ? v : 0;
          if (want !== v) zeroed++;
          expect(back.agents[a]!.frame[j]).toBe(want);
        });
      });
      if (deadSlots) expect(zeroed).toBeGreaterThan(0);
      return buf.len;
    };
    const full = size(false);
    const reduced = size(true);
    expect(reduced).toBeLessThan(full / 4);
  });

  it('verifyHash: every state of the mixed fixture agrees with the facts and its incremental hash', () => {
    const p = load('test/fixtures/ptx/mixed.ptx');
    expect(givenUp(p)).toEqual([0]);
    const r = check(p, { all: true, verifyHash: true });
    expect(r.complete).toBe(true);
    expect(r.coverage.states).toBeGreaterThan(10);
  });
});

describe('dead registers of unanalysed warps: on and off find the same hazards and final states', () => {
  for (const f of FILES) {
    it(f, () => {
      const p = load(f);
      expect(givenUp(p).length).toBeGreaterThan(0);
      const on = outcome(p, true);
      const off = outcome(p, false);
      expect(on.complete).toBe(true);
      expect(off.complete).toBe(true);
      expect(on.verdict).toBe(off.verdict);
      expect(on.hazards).toEqual(off.hazards);
      expect(on.finals).toEqual(off.finals);
      expect(on.states).toBeLessThanOrEqual(off.states);
      console.log(`${f}: ${on.verdict} ${on.hazards.join(' ')}; ${on.states} states with, ${off.states} without`);
    }, 600_000);
  }
});

/**
 * Without the warp-relative analysis (the internal `warpRelative: false`) every PTX warp falls back
 * to the liveness: the search with and without the dead slots on every PTX fixture, its planted
 * twins and the reference kernels small enough to finish unreduced (CTA symmetry off: the sketch
 * check's would keep whole frames).
 */
describe('every PTX warp left to the liveness: on and off find the same hazards and final states', () => {
  const dir = 'test/fixtures/ptx';
  const files = [
    ...readdirSync(dir).filter((f) => f.endsWith('.ptx')).map((f) => `${dir}/${f}`),
    ...readdirSync(`${dir}/planted`).filter((f) => f.endsWith('.ptx')).map((f) => `${dir}/planted/${f}`),
    'hw/kernels/tma_wgmma.bug1.ptx', 'hw/kernels/tma_wgmma.bug3.ptx',
  ];
  const run = (p: Program, deadSlots: boolean) => {
    const finals = new Set<string>();
    const r = explore(p, { all: true, strict: true, deadSlots, warpRelative: false, ctaSymmetry: false, maxStates: 40_000, timeoutMs: 300_000, randomRuns: false, onTerminal: (s) => finals.add(finalText(p, s, false)) });
    return { complete: r.complete, states: r.states, hazards: [...new Set(r.hazards.map((h) => `${h.kind}|${h.subject ?? ''}`))].sort(), finals: [...finals].sort() };
  };
  let compared = 0;
  for (const f of files) {
    it(f, () => {
      let p: Program;
      try {
        p = load(f);
      } catch {
        return; // a file of several kernels, or one without its launch here: the other tests check it
      }
      const an = analyse(p, { warpRelative: false, ctaSymmetry: false });
      const served = p.agents.filter((a) => an.rel[a.id]?.knownUpTo !== undefined).length;
      expect(served).toBe(p.agents.filter((a) => p.roles[a.role]!.decl.asWritten).length);
      const on = run(p, true);
      const off = run(p, false);
      expect(on.complete).toBe(off.complete);
      if (!off.complete) return;
      compared++;
      expect(on.hazards).toEqual(off.hazards);
      expect(on.finals).toEqual(off.finals);
      expect(on.states).toBeLessThanOrEqual(off.states);
      console.log(`${f}: ${on.hazards.join(' ') || 'ok'}; ${on.states} states with, ${off.states} without`);
    }, 600_000);
  }
  it('compared most of them', () => expect(compared).toBeGreaterThan(20));
});
