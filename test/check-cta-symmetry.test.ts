/**
 * Symmetry between the CTAs of a cluster (src/check/cta-symmetry.ts): which kernels get it and why
 * the others do not, the incremental image hashes against full recomputations, fewer states with
 * the same verdicts on the cluster reference kernel and its planted twins, and, on generated
 * rank-relative 2-CTA kernels, the same verdicts, hazard kinds and final states (up to the CTA
 * permutation) with CTA symmetry on and off.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { check, explore, type CheckResult } from '../src/check/index.js';
import { analyse } from '../src/check/analysis.js';
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
    expect([v.complete, v.states]).toEqual([true, 3002]);
    const on = check(p, {});
    const off = check(p, { ctaSymmetry: false });
    expect([on.verdict, on.complete, off.verdict, off.complete]).toEqual(['ok', true, 'ok', true]);
    expect(on.coverage.states).toBe(3002);
    expect(off.coverage.states).toBe(5674);
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
      let p: Program;
      try {
        p = instantiate(k);
      } catch (e) {
        if (e instanceof KernelError) return;
        throw e;
      }
      const perms = ctaPerms(p);
      if (!perms.length) return;
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
    const k = JSON.parse(readFileSync('test/fixtures/differential/multicast-order-cta-rotation.json', 'utf8')) as Kernel;
    const fwd = states(k).coverage;
    expect(fwd.ctaSymmetry.permutations).toEqual([[1, 0]]);
    // 3,340 states without CTA symmetry; before, the image of CTA 0's multicast (destinations
    // c1, c0) never matched CTA 1's own (c0, c1), so which of two symmetric states was reached
    // first decided the count (1,705 or more, by the roles' order and the workers' timing)
    expect(fwd.states).toBe(1705);
    expect(states({ ...k, roles: [...k.roles].reverse() }).coverage.states).toBe(1705);
    expect(check(instantiate(k), { all: true, strict: true, ctaSymmetry: false }).coverage.states).toBe(3340);
  });

  test('a wgmma of a role of two warps completed in both CTAs: its elected-thread ghosts are renamed in the image', () => {
    const k = JSON.parse(readFileSync('test/fixtures/differential/wgmma-ghost-cta-rotation.json', 'utf8')) as Kernel;
    expect(states(k).coverage.ctaSymmetry.permutations).toEqual([[1, 0]]);
    // 81 states without CTA symmetry, 45 orbits. Before, the image renamed a completed wgmma's
    // ghost reads (EG | kind | buffer·2 + write, ghosts.ts) as plain access codes, so no image of
    // a state holding one was ever reached: 57 states in one roles' order, 63 in the other.
    expect([states(k).coverage.states, states({ ...k, roles: [...k.roles].reverse() }).coverage.states]).toEqual([45, 45]);
    expect(states(k, 2).coverage.states).toBe(45);
    expect(check(instantiate(k), { all: true, strict: true, ctaSymmetry: false }).coverage.states).toBe(81);
  });
});
