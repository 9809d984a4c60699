import { describe, expect, test } from 'vitest';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { check } from '../src/check/check.js';
import { paramExcluded } from '../src/check/param-branches.js';

// A ring whose consumer releases the stage with a local arrive when C == 1 and with one remote
// arrive per CTA otherwise: the arrive of the branch not taken is a specialization.
const ring = (cond1: string, cond2: string) => `kernel spec arch=sm_90a
param C = 1
param K = 2
smem A[1] bytes=1024
barrier full[1] count=1
barrier empty[1] count=1
role producer warps=1 per=one:
    for k in range(0, K):
        mbarrier.try_wait.parity empty[0], (k & 1) ^ 1
        mbarrier.arrive.expect_tx full[0], 1024
        cp.async.bulk.tensor A[0], 1024, full[0]
role consumer warps=1 per=one:
    for k in range(0, K):
        mbarrier.try_wait.parity full[0], k & 1
        ld.shared A[0]
        if ${cond1}:
            mbarrier.arrive empty[0]
        if ${cond2}:
            mbarrier.arrive empty[0]
`;
const kernelOf = (src: string) => {
  const r = parseSketch(src, 'spec.mbk');
  expect(r.diagnostics).toEqual([]);
  return r.kernel!;
};

describe('arrives that a branch on parameters leaves out', () => {
  test('paramExcluded names the statements of the branch not taken, with its condition', () => {
    const k = kernelOf(ring('C == 1', 'C > 1'));
    const ex = paramExcluded(k, { C: 1, K: 2 });
    expect([...ex.entries()].map(([at, b]) => `${at} ${b.cond} ${b.loc.line}`)).toEqual(['spec.mbk:19:13 C > 1 18']);
    const ex2 = paramExcluded(k, { C: 2, K: 2 });
    expect([...ex2.keys()]).toEqual(['spec.mbk:17:13']);
  });
  test('a condition on a loop or local variable, or a builtin, decides nothing statically', () => {
    const k = kernelOf(ring('k == 0', 'cta == 5'));
    expect(paramExcluded(k, { C: 1, K: 2 }).size).toBe(0);
  });
  test('a clean specialization is not reported (before: unreachable-arrive)', () => {
    const r = check(instantiate(kernelOf(ring('C == 1', 'C > 1'))));
    expect(r.verdict).toBe('ok');
    expect(r.warnings.map((w) => w.kind)).toEqual([]);
  });
  test('an arrive left out by a wrong parameter condition is still the cause of the hang it leads to', () => {
    const r = check(instantiate(kernelOf(ring('C == 2', 'C > 2'))));
    expect(r.verdict).toBe('hang');
    const w = r.warnings.filter((x) => x.kind === 'unreachable-arrive');
    expect(w.map((x) => x.locations[0]!.line)).toEqual([17, 19]);
    expect(w[0]!.message).toContain('(the branch `if C == 2` at line 16 leaves it out)');
    expect(r.hazards[0]!.cause?.kind).toBe('unreachable-arrive');
  });
});

describe('a hang that an expect_tx byte count explains', () => {
  test('names the tx-mismatch of its barrier as its cause (kind, message, the expect_tx line)', () => {
    const src = ring('C == 1', 'C > 1').replace('mbarrier.arrive.expect_tx full[0], 1024', 'mbarrier.arrive.expect_tx full[0], 2048');
    const r = check(instantiate(kernelOf(src)));
    expect(r.verdict).toBe('hang');
    const tx = r.hazards.find((h) => h.kind === 'tx-mismatch')!;
    expect(tx.subject?.name).toBe('full[0]');
    expect(r.hazards[0]!.cause).toEqual({ kind: 'tx-mismatch', message: tx.message, locations: tx.locations });
    expect(r.hazards[0]!.cause!.locations.map((l) => l.line)).toContain(10);
  });
});
