/**
 * Symmetry between the CTAs of a cluster (src/check/cta-symmetry.ts): which kernels get it and why
 * the others do not, the incremental image hashes against full recomputations, fewer states with
 * the same verdicts on the cluster reference kernel and its planted twins, and, on generated
 * rank-relative 2-CTA kernels, the same verdicts, hazard kinds and final states (up to the CTA
 * permutation) with CTA symmetry on and off; and the identification's completeness: the image of
 * every state stored is stored, and the count does not depend on the roles' order or the workers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { check, explore, type CheckResult } from '../src/check/index.js';
import { analyse } from '../src/check/analysis.js';
import { Codec, type Extra } from '../src/check/codec.js';
import { permuteState } from '../src/check/cta-permute.js';
import type { MachineState } from '../src/machine/machine.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate, KernelError, type Program } from '../src/machine/program.js';
import type { Kernel } from '../src/kernel/ir.js';
import { symmetricClusterKernelArb } from './support/gen-kernel.js';
import { ctaPerms, outcome } from './support/differential.js';

const repo = join(import.meta.dirname, '..');
function load(file: string, set: Record<string, number> = {}): Program {
  const parsed = parseSketch(readFileSync(join(repo, file), 'utf8'), file);
  expect(parsed.diagnostics).toEqual([]);
  return instantiate(parsed.kernel!, set);
}
const SMALL = { CONSUMERS: 1, S: 1, K: 2 };
const kinds = (r: CheckResult) => [...new Set([...r.hazards, ...r.warnings].map((h) => h.kind))].sort();

/** The program of generated kernel `k` when it instantiates and has a CTA permutation, else null (the property skips it). */
function symmetricProgram(k: Kernel): Program | null {
  let p: Program;
  try {
    p = instantiate(k);
  } catch (e) {
    if (e instanceof KernelError) return null;
    throw e;
  }
  return ctaPerms(p).length ? p : null;
}

describe('which kernels have CTA symmetry', () => {
  test('cluster-mc: the rank swap, with B[2s + cta] moved as a block of the two halves', () => {
    const p = load('examples/kernels/cluster-mc.mbk');
    const cs = analyse(p).cta;
    expect(cs.reason).toBeNull();
    expect(cs.perms.map((q) => q.rank)).toEqual([[1, 0]]);
    const q = cs.perms[0]!;
    // Agents map to the same role and warp in the other CTA; B[0]@c0 is B[1]@c1 in the image.
    for (const a of p.agents) expect([p.agents[q.agent[a.id]!]!.roleName, p.agents[q.agent[a.id]!]!.warp, p.agents[q.agent[a.id]!]!.rank]).toEqual([a.roleName, a.warp, 1 - a.rank]);
    const b0 = p.buffers.find((b) => b.name === 'B')!.offset;
    expect(p.bufferName(q.buf[b0]!)).toBe('B[1]@c1');
    expect(p.bufferName(q.buf[p.buffers.find((b) => b.name === 'A')!.offset]!)).toBe('A[0]@c1');
  });

  test.each([
    ['examples/cluster.mbk', {}, "an access of tile names only some of the elements that the CTAs' copies of it fill"],
    ['examples/cutlass-cooperative.mbk', { C: 2 }, 'producer: the byte offset into B depends on the CTA rank'],
    ['examples/bugs/B20.mbk', {}, 'a_ready is held by CTA 0 only'],
  ])('%s: none, with the reason', (file, set, reason) => {
    const cs = analyse(load(file, set)).cta;
    expect([cs.perms.length, cs.reason]).toEqual([0, reason]);
  });

  test('the summary says it', () => {
    const r = check(load('examples/kernels/cluster-mc.mbk', SMALL), {});
    expect(r.coverage.ctaSymmetry).toEqual({ permutations: [[1, 0]], reason: null });
    expect(check(load('examples/kernels/cluster-mc.mbk', SMALL), { ctaSymmetry: false }).coverage.ctaSymmetry).toEqual({ permutations: [], reason: 'off' });
  });
});

describe('cluster-mc and its planted twins', () => {
  test('incremental image hashes equal full recomputations; about half the states, same verdict', () => {
    const p = load('examples/kernels/cluster-mc.mbk', SMALL);
    // verifyHash: every incremental record and barrier sum (the images' included) against a full rehash.
    const v = explore(p, { verifyHash: true });
    expect([v.complete, v.states]).toEqual([true, 142]);
    const on = check(p, {});
    const off = check(p, { ctaSymmetry: false });
    expect([on.verdict, on.complete, off.verdict, off.complete]).toEqual(['ok', true, 'ok', true]);
    expect(on.coverage.states).toBe(142);
    expect(off.coverage.states).toBe(263);
  });

  test.each(['cluster-mc-empty-factor', 'cluster-mc-no-exit-sync', 'cluster-mc-no-init-sync'])('%s: the same verdict and hazard kinds with and without', (name) => {
    const p = load(`examples/kernels/planted/${name}.mbk`, SMALL);
    expect(analyse(p).cta.perms.length).toBe(1);
    const on = check(p, { all: true });
    const off = check(p, { all: true, ctaSymmetry: false });
    expect(on.verdict).not.toBe('ok');
    expect([on.verdict, on.complete, kinds(on)]).toEqual([off.verdict, off.complete, kinds(off)]);
  }, 120_000);
});

describe('generated rank-relative 2-CTA kernels', () => {
  test('verdicts, hazard kinds and final states are the same with CTA symmetry on and off', () => {
    let compared = 0;
    let withPerm = 0;
    fc.assert(fc.property(symmetricClusterKernelArb, (k) => {
      const p = symmetricProgram(k);
      if (!p) return;
      const perms = ctaPerms(p);
      withPerm++;
      const on = outcome(p, { maxStates: 6000, timeout: 20_000 }, perms);
      if (!on.complete) return;
      const off = outcome(p, { ctaSymmetry: false, maxStates: 20_000, timeout: 20_000 }, perms);
      if (!off.complete) return;
      compared++;
      expect(on.hazards).toEqual(off.hazards);
      expect(on.finals).toEqual(off.finals);
      expect(on.states).toBeLessThanOrEqual(off.states);
    }), { numRuns: 60, seed: 20261202 });
    // The generator must reach the reduction: most of its kernels have the swap.
    expect(withPerm).toBeGreaterThan(30);
    expect(compared).toBeGreaterThan(15);
  }, 600_000);
});

describe('the identification is complete: the stored states do not depend on the exploration order', () => {
  const states = (k: Kernel, workers = 1) => check(instantiate(k), { all: true, strict: true, maxStates: 20_000, timeout: 60_000, workers });

  test('a multicast copy issued from both CTAs: its per-destination operations are created from the issuer rank up', () => {
    const k = JSON.parse(readFileSync('test/fixtures/cta-symmetry/multicast-order-cta-rotation.json', 'utf8')) as Kernel;
    const fwd = states(k).coverage;
    expect(fwd.ctaSymmetry.permutations).toEqual([[1, 0]]);
    // 3,065 states without CTA symmetry; before, the image of CTA 0's multicast (destinations
    // c1, c0) never matched CTA 1's own (c0, c1), so which of two symmetric states was reached
    // first decided the count (more than the 1,562 here, by the roles' order and the workers'
    // timing; 1,570 and 3,080 before arrivals on counting barriers were taken across a phase boundary)
    expect(fwd.states).toBe(1562);
    expect(states({ ...k, roles: [...k.roles].reverse() }).coverage.states).toBe(1562);
    expect(check(instantiate(k), { all: true, strict: true, ctaSymmetry: false }).coverage.states).toBe(3065);
  });

  test('a wgmma of a role of two warps completed in both CTAs: its elected-thread ghosts are renamed in the image', () => {
    const k = JSON.parse(readFileSync('test/fixtures/differential/wgmma-ghost-cta-rotation.json', 'utf8')) as Kernel;
    expect(states(k).coverage.ctaSymmetry.permutations).toEqual([[1, 0]]);
    // 37 states without CTA symmetry, 22 with it. Before, the image renamed a completed wgmma's
    // ghost reads (EG | kind | buffer·2 + write, ghosts.ts) as plain access codes, so no image of
    // a state holding one was ever reached, and the count depended on the roles' order.
    expect([states(k).coverage.states, states({ ...k, roles: [...k.roles].reverse() }).coverage.states]).toEqual([22, 22]);
    expect(states(k, 2).coverage.states).toBe(22);
    expect(check(instantiate(k), { all: true, strict: true, ctaSymmetry: false }).coverage.states).toBe(37);
  });

  test('generated rank-relative 2-CTA kernels: as many states with the roles in reverse order, and with two workers', () => {
    let compared = 0;
    let parallel = 0;
    const opts = { all: true, strict: true, maxStates: 6000, timeout: 20_000 };
    fc.assert(fc.property(symmetricClusterKernelArb, (k) => {
      const p = symmetricProgram(k);
      if (!p) return;
      const fwd = check(p, opts);
      if (!fwd.complete) return;
      // The roles' order decides the agents' ids, so which of two symmetric states the search meets first.
      const rev = check(instantiate({ ...k, roles: [...k.roles].reverse() }), opts);
      if (!rev.complete) return;
      compared++;
      expect(rev.coverage.states).toBe(fwd.coverage.states);
      if (parallel < 6) {
        parallel++;
        const two = check(p, { ...opts, workers: 2, timeout: 60_000 });
        expect([two.complete, two.coverage.states]).toEqual([true, fwd.coverage.states]);
      }
    }), { numRuns: 60, seed: 20261203 });
    expect(compared).toBeGreaterThan(20);
    expect(parallel).toBe(6);
  }, 600_000);

  /**
   * The states the search stores without CTA symmetry (with the other reductions), taken as the
   * codec encodes them; for each, whether its image under each CTA permutation is among them (by
   * the codec's hash without CTA symmetry): an image never reached is one the identification can
   * never match, so which of the two the search meets first decides the count. Returns the images
   * missing, or null when the search was incomplete.
   */
  const missingImages = (p: Program, maxStates: number): number | null => {
    const stored: { s: MachineState; x: Extra }[] = [];
    const enc = Codec.prototype.encode;
    const spy = vi.spyOn(Codec.prototype, 'encode').mockImplementation(function (this: Codec, s, x, buf, id, rh) {
      stored.push(structuredClone({ s, x }));
      enc.call(this, s, x, buf, id, rh);
    });
    let r: ReturnType<typeof explore>;
    try {
      r = explore(p, { all: true, strict: true, ctaSymmetry: false, maxStates, timeoutMs: 20_000 });
    } finally {
      spy.mockRestore();
    }
    if (r.stoppedBy) return null;
    const on = analyse(p);
    const codec = new Codec(p, analyse(p, { ctaSymmetry: false }), stored[0]!.s);
    const out = new Uint32Array(2);
    const key = (s: MachineState, x: Extra) => (codec.hash(s, x, out), `${out[0]}:${out[1]}`);
    const reached = new Set(stored.map((e) => key(e.s, e.x)));
    let missing = 0;
    for (const perm of on.cta.perms) for (const e of stored) {
      const im = permuteState(on, perm, e.s, e.x);
      if (!reached.has(key(im.s, im.x))) missing++;
    }
    return missing;
  };

  test('the fixtures: the image of every state stored without CTA symmetry is stored', () => {
    for (const f of ['cta-symmetry/multicast-order-cta-rotation', 'differential/wgmma-ghost-cta-rotation']) {
      const k = JSON.parse(readFileSync(`test/fixtures/${f}.json`, 'utf8')) as Kernel;
      expect([f, missingImages(instantiate(k), 20_000)]).toEqual([f, 0]);
    }
  }, 120_000);

  // Seed 7 reaches the elected-thread ghosts of wgmma-ghost-cta-rotation in its 8th and 38th kernels.
  test('generated rank-relative 2-CTA kernels: the image of every state stored without CTA symmetry is stored', () => {
    let compared = 0;
    fc.assert(fc.property(symmetricClusterKernelArb, (k) => {
      const p = symmetricProgram(k);
      if (!p) return;
      const missing = missingImages(p, 3000);
      if (missing === null) return;
      compared++;
      expect(missing).toBe(0);
    }), { numRuns: 60, seed: 7 });
    expect(compared).toBeGreaterThan(20);
  }, 600_000);
});
