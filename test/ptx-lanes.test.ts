// Arrives by 2 to 31 lanes of a warp, mbarrier.init by any warp (and by each lane its own
// barrier), and token waits, in nvcc's PTX of the fixtures `lanes.cu` / `token.cu` and in
// hand-written snippets (docs/PTX.md "What a warp is").
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

function program(src: string, file: string, launch: PtxLaunch) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
const fixture = (f: string, launch: PtxLaunch) => program(readFileSync(`test/fixtures/ptx/${f}`, 'utf8'), f, launch);
const snippet = (body: string, block = 64) => `.version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.reqntid ${block}, 1, 1\n{\n.reg .pred %p<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n${body}\nret;\n}\n`;
/** `arrive` events as `agent line count`. */
const arrives = (p: ReturnType<typeof program>, s: ReturnType<typeof simulate>) =>
  (s.events ?? []).flatMap((e) => (e.e === 'arrive' && e.agent >= 0 ? [`${p.agents[e.agent]!.name} ${e.loc?.line} ${e.count}`] : []));

describe('lanes.cu: lanes 0-7 of warps 0 and 1 arrive (count 16), warp 1 initializes the barriers', () => {
  it('each warp\'s arrive counts its 8 active lanes; two rounds simulate and check OK', () => {
    const p = fixture('lanes.ptx', { params: { param_1: 2 } });
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    // line 117: the writers' `mbarrier_arrive(&full)` (8 lanes); line 194: the reader's release of `empty` (one lane).
    expect(arrives(p, s).sort()).toEqual(['lanes.w0 117 8', 'lanes.w0 117 8', 'lanes.w1 117 8', 'lanes.w1 117 8', 'lanes.w2 194 1', 'lanes.w2 194 1']);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('-DBUG=1 (full counts 17, 16 lanes arrive) hangs', () => {
    const r = check(fixture('planted/lanes.bug1.ptx', { params: { param_1: 2 } }), { maxStates: 100_000 });
    expect(r.verdict).toBe('hang');
    expect(r.complete).toBe(true);
  });
});

describe('hand-written: lane counts and per-lane inits', () => {
  const INIT2 = [
    '.shared .align 8 .b8 bar[16];',
    'mov.u32 %r1, %tid.x;',
    'setp.gt.u32 %p1, %r1, LAST;',
    '@%p1 bra INITED;',
    'mov.u32 %r2, bar;',
    'mad.lo.u32 %r3, %r1, 8, %r2;',
    'mbarrier.init.shared.b64 [%r3], 32;',
    'INITED:',
    'bar.sync 0;',
    'shr.u32 %r4, %r1, 5;',
    'mov.u32 %r5, bar;',
    'mad.lo.u32 %r6, %r4, 8, %r5;',
    'mbarrier.arrive.shared.b64 _, [%r6];',
    'WAIT:',
    'mbarrier.try_wait.parity.shared.b64 %p2, [%r6], 0;',
    '@!%p2 bra WAIT;',
  ].join('\n');

  it('`if (tid < 2) init(&bar[tid])`: lanes 0 and 1 each initialize their own barrier', () => {
    const p = program(snippet(INIT2.replace('LAST', '1')), 'init2.ptx', {});
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    expect(arrives(p, s).sort()).toEqual(['k.w0 22 32', 'k.w1 22 32']);
  });

  it('only lane 0 initializing: warp 1 arrives on a barrier nobody initialized', () => {
    const s = simulate(program(snippet(INIT2.replace('LAST', '0')), 'init1.ptx', {}));
    expect(s.diagnostics.map((d) => d.diag.code)).toContain('uninitialized');
  });

  const SOME = (cond: string, addr: string) => [
    '.shared .align 8 .b8 bar[16];',
    'mov.u32 %r1, %tid.x;',
    'setp.ne.s32 %p1, %r1, 0;',
    '@%p1 bra SKIP;',
    'mov.u32 %r3, bar;',
    'mbarrier.init.shared.b64 [%r3], 64;',
    'mbarrier.init.shared.b64 [%r3+8], 64;',
    'SKIP:',
    'bar.sync 0;',
    cond,
    '@%p2 bra END;',
    addr,
    'mbarrier.arrive.expect_tx.shared.b64 _, [%r4], 100;',
    'END:',
  ].join('\n');

  it('an arrive.expect_tx by lanes 0-3 is one arrive of 4 with 4 × 100 bytes', () => {
    const p = program(snippet(SOME('setp.gt.u32 %p2, %r1, 3;', 'mov.u32 %r4, bar;')), 'lanes4.ptx', {});
    const s = simulate(p);
    const ev = (s.events ?? []).filter((e) => e.e === 'arrive').map((e) => e.e === 'arrive' && `${e.count} ${e.expectTx}`);
    expect(ev).toEqual(['4 400']);
  });

  it('lanes that arrive on different barriers (a lane-varying address) are refused, not counted wrongly', () => {
    const body = SOME('setp.gt.u32 %p2, %r1, 3;', 'and.b32 %r5, %r1, 1;\nmov.u32 %r6, bar;\nmad.lo.u32 %r4, %r5, 8, %r6;');
    const s = simulate(program(snippet(body), 'lanes-vary.ptx', {}));
    const d = s.diagnostics.find((x) => x.diag.code === 'not-modelled')!;
    expect(d.diag.message).toMatch(/^mbarrier\.arrive\.expect_tx\.shared\.b64 executed by several lanes of a warp in divergent code/);
    expect(d.loc?.line).toBe(24);
  });
});

describe('token waits: mbarrier.arrive returns the phase, try_wait / test_wait on it', () => {
  it('token.cu (cuda::barrier arrive + wait, the libcu++ backoff loop): OK in every schedule', () => {
    const p = fixture('token.ptx', { params: { param_1: 2 } });
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    // Every wait of the run is a token wait.
    const waits = (s.events ?? []).filter((e) => e.e === 'wait');
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((e) => e.e === 'wait' && e.token)).toBe(true);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('-DBUG=1 (no second crossing before the slot is rewritten) races on the slot', () => {
    const r = check(fixture('planted/token.bug1.ptx', { params: { param_1: 2 } }), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toBe('slot[0]');
    // the write `slot[threadIdx.x] = r` (token.cu:19) is one side
    expect(r.hazards[0]!.locations.some((l) => l.origin === 'token.cu:19')).toBe(true);
  });

  it('a token copied through mov, tested once with test_wait and waited on in a spin: one token', () => {
    const body = [
      '.shared .align 8 .b8 bar[8];',
      'mov.u32 %r1, %tid.x;',
      'setp.ne.s32 %p1, %r1, 0;',
      '@%p1 bra SKIP;',
      'mov.u32 %r3, bar;',
      'mbarrier.init.shared.b64 [%r3], 64;',
      'SKIP:',
      'bar.sync 0;',
      'mov.u32 %r4, bar;',
      'mbarrier.arrive.shared.b64 %rd1, [%r4];',
      'mov.b64 %rd2, %rd1;',
      'mbarrier.test_wait.shared.b64 %p3, [%r4], %rd2;',
      'selp.u32 %r7, 1, 0, %p3;',
      'mbarrier.pending_count.b64 %r8, %rd2;',
      'L:',
      'mbarrier.try_wait.shared.b64 %p2, [%r4], %rd2;',
      '@!%p2 bra L;',
    ].join('\n');
    const p = program(snippet(body), 'tok.ptx', {});
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    // pending_count reads the token (the machine's rule: meaningful after a .noComplete arrive only).
    expect(s.diagnostics.map((d) => `${d.diag.code} ${d.loc?.line}`)).toEqual(['pending-count-token 23', 'pending-count-token 23']);
    const waits = (s.events ?? []).filter((e) => e.e === 'wait').map((e) => e.e === 'wait' && `${e.loc.line} ${e.token}`);
    expect(waits).toContain('21 true');
    expect(waits).toContain('25 true');
  });

  it('a token that is not an arrive\'s result is a trap where it is used', () => {
    const body = '.shared .align 8 .b8 bar[8];\nmov.u32 %r4, bar;\nmov.b64 %rd1, 5;\nL:\nmbarrier.try_wait.shared.b64 %p2, [%r4], %rd1;\n@!%p2 bra L;';
    const s = simulate(program(snippet(body), 'notok.ptx', {}));
    const d = s.diagnostics.find((x) => x.diag.code === 'not-modelled')!;
    expect(d.diag.message).toMatch(/the token %rd1 does not come from an mbarrier\.arrive/);
    expect(d.loc?.line).toBe(14);
  });
});
