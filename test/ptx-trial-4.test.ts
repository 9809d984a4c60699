// A fourth trial of the PTX front end with kernels of the project's own in styles the other
// fixtures do not use (test/fixtures/ptx/trial4, built by its build.sh with nvcc 13 at -O3
// -lineinfo, one at -G): libcu++'s cuda::memcpy_async with arrive/wait(token), named barriers for a
// ring's empty side, cooperative_groups' DSMEM stores through map_shared_rank, a work-stealing
// atomicAdd scheduler and a tile scheduler whose indices pass through a shared ring, __noinline__ stage functions with a nanosleep backoff. The committed PTX is
// read; nvcc never runs here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { opsOf } from '../src/machine/values.js';
import { parsePtx } from '../src/ptx/index.js';
import type { Stmt } from '../src/kernel/ir.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

const DIR = 'test/fixtures/ptx/trial4';

const program = (f: string, launch: PtxLaunch) => {
  const r = parsePtx(readFileSync(`${DIR}/${f}`, 'utf8'), f);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
};
const run = (f: string, launch: PtxLaunch) => check(program(f, launch), { maxStates: 50_000, randomRuns: false }); // no random runs: their start depends on the clock
const first = (f: string, launch: PtxLaunch) => {
  const r = run(f, launch);
  const h = r.hazards[0];
  return { v: r.verdict, complete: r.complete, subject: h?.subject?.name, at: h?.locations.map((l) => `${l.line} (${l.origin})`) };
};

describe('mcopy.cu: cuda::barrier arrive()/wait(token) around cuda::memcpy_async (a bulk copy, then expect_tx)', () => {
  const L: PtxLaunch = { params: { param_2: 3 } };
  it('checks OK; the count one too high hangs, reading the other buffer races', () => {
    const text = readFileSync(`${DIR}/mcopy.ptx`, 'utf8');
    // libcu++ issues the copy before it raises the barrier's transaction count.
    expect(text.indexOf('cp.async.bulk.shared::cluster.global')).toBeLessThan(text.indexOf('mbarrier.expect_tx'));
    expect(first('mcopy.ptx', L)).toMatchObject({ v: 'ok', complete: true });
    const bug1 = run('planted/mcopy.bug1.ptx', L);
    expect(bug1.verdict).toBe('hang');
    expect(bug1.hazards[0]!.subject!.name).toBe('bar[0]');
    expect(bug1.hazards[0]!.cause!.message).toMatch(/the count is 65/);
    expect(first('planted/mcopy.bug2.ptx', L)).toMatchObject({ v: 'race', subject: 'buf[1]', at: ['242 (mcopy.cu:41)', '125 (mcopy.cu:37)'] });
  }, 60_000);
});

describe('namedring.cu: mbarriers for full, bar.sync / bar.arrive (1 + s, 96) for empty, 3 stages, k_tiles a parameter', () => {
  const L: PtxLaunch = { params: { param_2: 5 } };
  it('checks OK; a named-barrier count of 128 in a 96-thread block hangs, the inverted phase races', () => {
    expect(first('namedring.ptx', L)).toMatchObject({ v: 'ok', complete: true });
    const bug1 = run('planted/namedring.bug1.ptx', L);
    expect(bug1.verdict).toBe('hang');
    expect(bug1.hazards[0]!.cause!.message).toMatch(/named barrier 1 has 96 participating threads per use .* but count 128/);
    expect(first('planted/namedring.bug2.ptx', L)).toMatchObject({ v: 'race', subject: 'stage[0]' });
  }, 60_000);
});

describe('cgcluster.cu: cooperative_groups map_shared_rank (generic stores into the peer CTA), remote arrives, split cluster barrier', () => {
  const L: PtxLaunch = { params: { param_1: 3 } };
  it('translates the generic DSMEM store through mapa.u64 as a store into CTA 0 (a mapa nothing else reads is no error)', () => {
    const text = readFileSync(`${DIR}/cgcluster.ptx`, 'utf8');
    expect(text).toMatch(/mapa\.u64\s+%rd\d+, %rd\d+, %r\d+;/);
    expect(text).toMatch(/\n\tst\.u32\s+\[%rd1\], %r\d+;/);
    const k = translatePtx((parsePtx(text, 'cgcluster.ptx') as { ok: true; module: Parameters<typeof translatePtx>[0] }).module, L).kernel;
    const stores = k.roles.flatMap((r) => opsOf(r.body)).filter((o) => o.op === 'st.shared');
    // The warp's lane-varying store: its lead lane's element and lane 31's, each in the CTA its address names.
    expect(stores.map((o) => o.op === 'st.shared' && o.buf.name)).toEqual(['slot', 'slot']);
    expect(stores.every((o) => o.op === 'st.shared' && o.buf.cta !== undefined)).toBe(true);
  });
  it('a mapa whose peer address only a value stored to global memory uses is left out with it (no unknown register)', () => {
    const src = [
      '.version 8.8', '.target sm_90a', '.address_size 64', '',
      '.visible .entry k(.param .u64 k_param_0)', '.reqnctapercluster 2, 1, 1', '{',
      '\t.reg .b32 %r<3>;', '\t.reg .b64 %rd<6>;', '\t.shared .align 8 .b8 s[64];',
      '\tld.param.u64 %rd1, [k_param_0];', '\tmov.u32 %r1, s;', '\tcvt.u64.u32 %rd2, %r1;', '\tcvta.shared.u64 %rd3, %rd2;',
      '\tmov.u32 %r2, 1;', '\tmapa.u64 %rd4, %rd3, %r2;', '\tst.global.u64 [%rd1], %rd4;', '\tret;', '}', '',
    ].join('\n');
    const r = parsePtx(src, 'peer.ptx');
    if (!r.ok) throw new Error(r.diagnostic.message);
    const p = instantiate(translatePtx(r.module, { block: 32 }).kernel);
    expect(check(p, { maxStates: 100, randomRuns: false }).verdict).toBe('ok');
  });
  it('checks OK; arriving before the store races on CTA 0\'s slot, a missing hand-back hangs', () => {
    expect(first('cgcluster.ptx', L)).toMatchObject({ v: 'ok', complete: true });
    expect(first('planted/cgcluster.bug1.ptx', L)).toMatchObject({ v: 'race', subject: 'slot[0]@c0', at: ['178 (cgcluster.cu:50)', '202 (cgcluster.cu:58)', expect.stringMatching(/^171 \(cgcluster.cu:27, inlined at cgcluster.cu:49\)$/)] });
    expect(first('planted/cgcluster.bug2.ptx', L)).toMatchObject({ v: 'hang', subject: 'freed[0]@c1' });
  }, 60_000);
});

describe('steal.cu: a persistent loop whose next tile is atomicAdd on a global counter, passed on through shared memory', () => {
  const L: PtxLaunch = { params: { param_3: 3 } };
  it('checks OK: the tile index the producer stores in next[s] is the value the consumer loads and breaks on', () => {
    const text = readFileSync(`${DIR}/steal.ptx`, 'utf8');
    expect(text).toMatch(/st\.shared\.u32 \t\[%r67\], %r64;/);
    expect(text).toMatch(/ld\.shared\.u32 \t%r7, \[%r37\];/);
    const ops = program('steal.ptx', L).kernel.roles.flatMap((r) => opsOf(r.body));
    expect(ops.filter((o) => o.op === 'ld.shared' && o.dest !== undefined).map((o) => o.op === 'ld.shared' && o.dest)).toEqual(['%r7']);
    expect(ops.some((o) => o.op === 'st.shared' && o.value !== undefined)).toBe(true);
    const r = run('steal.ptx', L);
    expect({ v: r.verdict, complete: r.complete, states: r.coverage.states }).toEqual({ v: 'ok', complete: true, states: 99 });
    expect(simulate(program('steal.ptx', L)).verdict).toBe('ok');
    // No tile at all: the first value the consumer reads is the sentinel.
    expect(run('steal.ptx', { params: { param_3: 0 } }).verdict).toBe('ok');
  }, 60_000);
  it('finds the planted bugs: 4 bytes fewer expected than the copy delivers (a hang, tx-count -4); the first stage never released (a hang)', () => {
    const r = run('planted/steal.bug1.ptx', L);
    expect(r.verdict).toBe('hang');
    expect(r.hazards[0]!.details.join('\n')).toMatch(/4 more bytes were credited by complete_tx than expected \(tx-count -4\)/);
    expect(first('planted/steal.bug2.ptx', L)).toMatchObject({ v: 'hang', complete: true, subject: 'empty[0]', at: ['246 (steal.cu:21, inlined at steal.cu:43)', '122 (steal.cu:21, inlined at steal.cu:67)'] });
  }, 60_000);
});

describe('schedring.cu: a tile scheduler through a shared ring next[2] (one producer lane, two consumer warps that break on the sentinel -1)', () => {
  const L: PtxLaunch = { params: { param_2: 3 } };
  it('checks OK and runs; reading next[s] before the wait races; a sentinel never written hangs', () => {
    expect(first('schedring.ptx', L)).toMatchObject({ v: 'ok', complete: true });
    expect(run('schedring.ptx', L).coverage.states).toBe(328);
    expect(simulate(program('schedring.ptx', L)).verdict).toBe('ok');
    expect(first('planted/schedring.bug1.ptx', L)).toMatchObject({ v: 'race', subject: 'next[0]', at: ['215 (schedring.cu:47)', '105 (schedring.cu:62)'] });
    expect(first('planted/schedring.bug2.ptx', L)).toMatchObject({ v: 'hang', complete: true, subject: 'full[0]', at: ['112 (schedring.cu:21, inlined at schedring.cu:65)', '112 (schedring.cu:21, inlined at schedring.cu:65)'] });
  }, 120_000);
  it('the reductions agree with the unreduced search on the values passed through next[s] (verdicts of the kernel and its twins)', () => {
    const plain = { maxStates: 200_000, randomRuns: false as const, por: false, symmetry: false, stableWaits: false, stableLandings: false };
    for (const f of ['schedring.ptx', 'planted/schedring.bug1.ptx', 'planted/schedring.bug2.ptx']) {
      const reduced = check(program(f, L), { maxStates: 50_000, randomRuns: false });
      const full = check(program(f, L), plain);
      expect([f, full.verdict, full.hazards.map((h) => h.subject?.name)]).toEqual([f, reduced.verdict, reduced.hazards.map((h) => h.subject?.name)]);
      expect(full.coverage.states).toBeGreaterThanOrEqual(reduced.coverage.states);
    }
  }, 300_000);
});

describe('sleepy.cu: __noinline__ stage functions (call.uni), a nanosleep backoff around mbarrier.test_wait', () => {
  const L: PtxLaunch = { params: { param_2: 3 } };
  it('checks OK at -O3 and -G; the inverted phase is a race cited in the callee and the caller', () => {
    expect(readFileSync(`${DIR}/sleepy.ptx`, 'utf8')).toMatch(/nanosleep\.u32/);
    expect(first('sleepy.ptx', L)).toMatchObject({ v: 'ok', complete: true });
    expect(simulate(program('sleepy.ptx', L)).verdict).toBe('ok');
    expect(first('sleepy_debug.ptx', L)).toMatchObject({ v: 'ok', complete: true });
    expect(first('planted/sleepy.bug1.ptx', L)).toMatchObject({ v: 'race', subject: 'stage[0]', at: ['196 (sleepy.cu:41)', '147 (sleepy.cu:32)'] });
  }, 120_000);
});

describe('loads of nvcc\'s initialized temporaries (-G: cuda::aligned_size_t<16>(1024) is `.global .b8 K$0[8] = {0, 4}`)', () => {
  const kernel = (sym: string) => [
    '.version 8.8', '.target sm_90a', '.address_size 64', '',
    `.global .align 8 .b8 ${sym}[8] = {0, 4};`, '',
    '.visible .entry k()', '{',
    '\t.reg .b32 %r<4>;', '\t.reg .b64 %rd<4>;', '\t.shared .align 8 .b8 bar[8];',
    `\tmov.u64 %rd1, ${sym};`, '\tcvta.global.u64 %rd2, %rd1;', '\tld.u64 %rd3, [%rd2];', '\tcvt.u32.u64 %r1, %rd3;',
    '\tmov.u32 %r2, bar;', '\tmbarrier.init.shared.b64 [%r2], %r1;', '\tret;', '}', '',
  ].join('\n');
  const inits = (sym: string) => {
    const r = parsePtx(kernel(sym), 'init.ptx');
    if (!r.ok) throw new Error(r.diagnostic.message);
    return translatePtx(r.module, { block: 32 }).kernel.roles.flatMap((x) => opsOf(x.body));
  };
  it('reads the initializer (little-endian bytes 0, 4: 1024) of a compiler temporary nothing stores to', () => {
    const ops = inits('k$0');
    expect(ops.find((o) => o.op === 'mbarrier.init')).toMatchObject({ count: { k: 'var' } });
    expect(ops.some((o) => o.op === 'trap')).toBe(false);
    const k = translatePtx((parsePtx(kernel('k$0'), 'init.ptx') as Extract<ReturnType<typeof parsePtx>, { ok: true }>).module, { block: 32 }).kernel;
    expect(JSON.stringify(k.roles[0]!.body)).toMatch(/"name":"%rd3","value":\{"k":"num","v":1024\}/);
    const p = instantiate(k);
    const r = simulate(p);
    expect(r.verdict).toBe('ok');
    expect(r.events).not.toBeNull();
    expect(r.events!.some((e) => e.e === 'diag')).toBe(false);
  });
  it('leaves a user variable (the host may set it before the launch) opaque, naming the load', () => {
    const ops = inits('user');
    const trap = ops.find((o) => o.op === 'trap');
    expect(trap).toMatchObject({ message: expect.stringMatching(/^mbarrier\.init\.shared\.b64: the value of %r1 is not modelled \(it comes from ld\.u64 %rd3, \[%rd2\] at line 14 \(memory data through a generic address\)\)$/) });
  });
});

describe('a token wait whose token joins two arrive paths (an unoptimized libcu++ barrier::arrive)', () => {
  it('is a not-modelled trap naming the register with two definitions and their lines', () => {
    const src = [
      '.version 8.8', '.target sm_90a', '.address_size 64', '',
      '.visible .entry k(.param .u32 k_param_0)', '{',
      '\t.reg .pred %p<3>;', '\t.reg .b32 %r<4>;', '\t.reg .b64 %rd<4>;', '\t.shared .align 8 .b8 bar[8];',
      '\tld.param.u32 %r3, [k_param_0];', '\tmov.u32 %r1, bar;', '\tmbarrier.init.shared.b64 [%r1], 32;',
      '\tsetp.eq.s32 %p1, %r3, 0;', '\t@%p1 bra L1;',
      '\tmbarrier.arrive.shared.b64 %rd1, [%r1];', '\tmov.b64 %rd3, %rd1;', '\tbra.uni L2;',
      'L1:', '\tmbarrier.arrive.shared.b64 %rd2, [%r1];', '\tmov.b64 %rd3, %rd2;',
      'L2:', '\tmbarrier.test_wait.shared.b64 %p2, [%r1], %rd3;', '\tret;', '}', '',
    ].join('\n');
    const r = parsePtx(src, 'join.ptx');
    if (!r.ok) throw new Error(r.diagnostic.message);
    const ops = translatePtx(r.module, { block: 32, params: { param_0: 1 } }).kernel.roles.flatMap((x) => opsOf(x.body));
    expect(ops.find((o) => o.op === 'trap')).toMatchObject({
      message: 'mbarrier.test_wait.shared.b64: not modelled yet: the token %rd3 does not come from an mbarrier.arrive: %rd3 has 2 definitions (line 17, line 21), the paths of a join (mbsim follows its single-definition copies back to the arrive that returned it)',
    });
  });
});

describe('-G: a cuda::ptx wrapper kept as a .func cites the user\'s call site, not the toolkit header', () => {
  it('sleepy_debug.ptx: the mbarrier.init and the bulk copy name sleepy.cu lines', () => {
    const r = parsePtx(readFileSync(`${DIR}/sleepy_debug.ptx`, 'utf8'), 'sleepy_debug.ptx');
    if (!r.ok) throw new Error(r.diagnostic.message);
    const origins = new Map<string, Set<string>>();
    const walk = (ss: readonly Stmt[]): void => {
      for (const s of ss) {
        if (s.s === 'op') (origins.get(s.op.op) ?? origins.set(s.op.op, new Set()).get(s.op.op)!).add(s.loc.origin ?? '');
        else if (s.s === 'for' || s.s === 'elect') walk(s.body);
        else if (s.s === 'if') { walk(s.then); if (s.else) walk(s.else); }
      }
    };
    for (const role of translatePtx(r.module, { params: { param_2: 3 } }).kernel.roles) walk(role.body);
    expect([...origins.get('mbarrier.init')!]).toEqual(['sleepy.cu:51', 'sleepy.cu:52']);
    expect([...origins.get('cp.async.bulk')!]).toEqual(['sleepy.cu:32']);
    expect([...origins.get('mbarrier.wait')!]).toEqual(['sleepy.cu:23']);
  });
});
