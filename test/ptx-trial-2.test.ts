// A new user's trial of the PTX front end (issue 14): six kernels of the project's own, written
// fresh with CCCL's cuda::ptx and inline PTX and compiled by nvcc 13 at -O3 -lineinfo
// (test/fixtures/ptx/trial/build.sh), each with a planted-bug twin. The committed PTX is read;
// nvcc never runs here.
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import type { PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';
import { TRIAL_DIR, trialProgram } from './support/ptx-trial.js';

const DIR = TRIAL_DIR;
const program = trialProgram;
const verdict = (f: string, launch: PtxLaunch) => {
  const r = check(program(f, launch), { maxStates: 50_000 });
  return { v: r.verdict, complete: r.complete, h: r.hazards[0], subject: r.hazards[0]?.subject?.name };
};

describe('ring3.cu: 3-stage ring of 1-D bulk copies, phase bit flipped on wrap', () => {
  const L = { params: { param_2: 4 } };
  it('cuts the stage array at the copies\' constant size (4096 B) and checks OK', () => {
    const p = program('ring3.ptx', L);
    expect(p.buffers.map((b) => `${b.name}[${b.length}] ${b.bytes}`)).toEqual(['stage[3] 4096']);
    expect(simulate(p).verdict).toBe('ok');
    const r = verdict('ring3.ptx', L);
    expect([r.v, r.complete]).toEqual(['ok', true]);
  }, 60_000);
  it('-DBUG=1 (consumers start on parity 1) races on stage[0]; -DBUG=2 (half the expect_tx bytes) hangs', () => {
    expect(verdict('planted/ring3.bug1.ptx', L)).toMatchObject({ v: 'race', subject: 'stage[0]' });
    expect(verdict('planted/ring3.bug2.ptx', L).v).toBe('hang');
  }, 60_000);
});

describe('named.cu / acquire.cu: per-thread shared stores by several warps', () => {
  it('named barriers (bar.sync / bar.arrive 1|2, 128): OK; reading after releasing races', () => {
    const p = program('named.ptx', { params: { param_2: 3 } });
    // one warp's bytes per element (32 lanes × 4 B), so warps 0 and 1 fill different elements
    expect(p.buffers.map((b) => `${b.name}[${b.length}] ${b.bytes}`)).toEqual(['tile[16] 128']);
    expect(verdict('named.ptx', { params: { param_2: 3 } })).toMatchObject({ v: 'ok', complete: true });
    expect(verdict('planted/named.bug1.ptx', { params: { param_2: 3 } })).toMatchObject({ v: 'race', subject: 'tile[0]' });
  }, 60_000);
  it('CUTLASS-style `@P1 bra DONE; bra LAB_WAIT;` loops with .acquire.cta: OK; an unflipped parity races', () => {
    expect(verdict('acquire.ptx', { params: { param_1: 4 } })).toMatchObject({ v: 'ok', complete: true });
    expect(verdict('planted/acquire.bug1.ptx', { params: { param_1: 4 } })).toMatchObject({ v: 'race', subject: 'slot[0]' });
  }, 60_000);
});

describe('ampere.cu / proxy.cu: cp.async with cp.async.mbarrier.arrive.noinc, a bulk store epilogue', () => {
  it('cp.async completing on the barrier: OK; a plain arrive instead races with the copy', () => {
    expect(verdict('ampere.ptx', { params: { param_2: 2 } })).toMatchObject({ v: 'ok', complete: true });
    expect(verdict('planted/ampere.bug1.ptx', { params: { param_2: 2 } })).toMatchObject({ v: 'race', subject: 'buf[0]' });
  }, 60_000);
  it('cp.async.bulk.global.shared::cta.bulk_group is a bulk store: OK; without fence.proxy.async a missing fence at the generic write', () => {
    expect(verdict('proxy.ptx', { params: { param_1: 2 } })).toMatchObject({ v: 'ok', complete: true });
    const r = verdict('planted/proxy.bug1.ptx', { params: { param_1: 2 } });
    expect(r.v).toBe('missing-fence');
    expect(r.subject).toBe('stage[0..15]'); // the bulk store reads the whole 2 KiB tile, all 16 of its 128-byte elements
  }, 60_000);
});

describe('cluster2.cu: __cluster_dims__(2,1,1), multicast TMA, remote release through mapa', () => {
  const L = { params: { param_2: 1 }, tensorMaps: { param_0: 8192 } };
  it('the cluster comes from .reqnctapercluster; a contradicting --cluster is refused at the directive', () => {
    const p = program('cluster2.ptx', L);
    expect(p.agents.map((a) => a.name)).toEqual(['cluster2.w0@c0', 'cluster2.w1@c0', 'cluster2.w0@c1', 'cluster2.w1@c1']);
    expect(() => program('cluster2.ptx', { ...L, cluster: 4 })).toThrow(/requires clusters of 2 CTAs, and the launch has 4/);
    expect(program('cluster2.ptx', { ...L, cluster: 2 }).agents).toHaveLength(4);
  });
  it('one tile checks OK; the release on the wrong rank hangs (run, three tiles)', () => {
    expect(verdict('cluster2.ptx', L)).toMatchObject({ v: 'ok', complete: true });
    expect(simulate(program('planted/cluster2.bug1.ptx', { ...L, params: { param_2: 3 } })).verdict).toBe('hang');
  }, 60_000);
});
