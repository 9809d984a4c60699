// Local memory (-G builds): per-thread cells of a `.local` depot, reached through %SPL, %SP
// (cvta.local) and call-site arguments passed by reference (src/ptxi/local.ts); generic accesses of
// shared arrays (src/ptxi/generic.ts) and the -G shape of the try_wait spin loop. The -G trial
// kernels check with the verdicts of their -lineinfo twins. The committed PTX is read; nvcc never
// runs here (test/fixtures/ptx/trial/build.sh).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { flatten } from '../src/ptxi/flat.js';
import { localMemory } from '../src/ptxi/local.js';
import { simulate } from '../src/sim/simulate.js';

const DIR = 'test/fixtures/ptx/trial';
function parse(src: string, file: string) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return r.module;
}
const program = (src: string, file: string, launch: PtxLaunch) => instantiate(translatePtx(parse(src, file), launch).kernel);
const trial = (f: string, launch: PtxLaunch) => program(readFileSync(`${DIR}/${f}`, 'utf8'), f, launch);
const verdict = (f: string, launch: PtxLaunch) => {
  const r = check(trial(f, launch), { maxStates: 50_000 });
  return { v: r.verdict, complete: r.complete, subject: r.hazards[0]?.subject?.name };
};

// Lane l stores its lane id at [%SP+4] and lane 0 the count at [%SPL+0]; lanes 0-7 (read back
// through a generic pointer) arrive, lane 0 initializes the barrier with the count read back.
const LANES = `.version 8.0
.target sm_90a
.address_size 64

.visible .entry lanes_local(.param .u32 n)
.reqntid 32
{
	.local .align 4 .b8 __local_depot0[8];
	.reg .b64 %SP;
	.reg .b64 %SPL;
	.reg .b64 %rd<4>;
	.reg .b32 %r<8>;
	.reg .f32 %f<2>;
	.reg .pred %p<4>;
	.shared .align 8 .b64 bar;
	mov.u64 %SPL, __local_depot0;
	cvta.local.u64 %SP, %SPL;
	mov.u32 %r1, %laneid;
	st.u32 [%SP+4], %r1;
	ld.param.u32 %r2, [n];
	st.local.u32 [%SPL+0], %r2;
	mov.u32 %r3, bar;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra SKIP;
	ld.local.u32 %r4, [%SPL+0];
	mbarrier.init.shared.b64 [%r3], %r4;
SKIP:
	bar.sync 0;
	add.u64 %rd1, %SP, 4;
	ld.u32 %r5, [%rd1];
	setp.ge.u32 %p2, %r5, 8;
	@%p2 bra WAIT;
	mbarrier.arrive.shared.b64 %rd2, [%r3];
WAIT:
	mbarrier.try_wait.parity.shared.b64 %p3, [%r3], 0;
	@!%p3 bra WAIT;
	ret;
}
`;

describe('per-thread local memory', () => {
  it('each lane reads back its own value and the count exactly: 8 lanes arrive on a barrier of 8 (OK), of 9 (a hang)', () => {
    const p = program(LANES, 'lanes.ptx', { params: { n: 8 } });
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect((s.events ?? []).flatMap((e) => (e.e === 'arrive' ? [`${e.loc?.line} ${e.count}`] : []))).toEqual(['33 8']);
    expect(check(p, { maxStates: 1000 }).verdict).toBe('ok');
    const r = check(program(LANES, 'lanes.ptx', { params: { n: 9 } }), { maxStates: 1000 });
    expect(r.verdict).toBe('hang');
    expect(r.hazards[0]!.cause?.message).toMatch(/bar\[0\] expects 9 arrival\(s\) per phase, but its arrivers make 8/);
  });

  it('the lane ids are 32 cells, the count one: the translation names them after the depot and offset', () => {
    const m = parse(LANES, 'lanes.ptx');
    const f = m.items.find((x) => x.kind === 'function')!;
    if (f.kind !== 'function') throw new Error('no function');
    const flat = localMemory(flatten(f, m), m);
    expect(flat.local.modelled).toEqual(['__local_depot0']);
    const text = flat.items.flatMap((x) => ('label' in x ? [] : [`${x.ins.pos.line} ${x.ins.opcode} ${x.ins.operands.map((o) => (o.kind === 'name' ? o.name : o.kind === 'int' ? o.text : o.kind)).join(', ')}`]));
    expect(text).toContain('19 mov.u32 __local_depot0+4, %r1');
    expect(text).toContain('21 mov.u32 __local_depot0+0, %r2');
    expect(text).toContain('25 mov.u32 %r4, __local_depot0+0');
    expect(text).toContain('30 mov.u32 %r5, __local_depot0+4');
    // The depot's symbol is an address of its own (local.ts LOCAL_BASE).
    expect(text).toContain(`16 mov.u64 %SPL, ${0x4000_0000}`);
    const k = translatePtx(m, { params: { n: 8 } }).kernel;
    const lets = new Set<string>();
    const walk = (ss: typeof k.roles[0]['body']): void => { for (const s of ss) { if (s.s === 'let') lets.add(s.name); if (s.s === 'if') { walk(s.then); walk(s.else ?? []); } } };
    walk(k.roles[0]!.body);
    expect(lets.has('__local_depot0+0')).toBe(true);
    expect(lets.has('__local_depot0+4@31')).toBe(true);
    expect(lets.has('__local_depot0+0@0')).toBe(false);
  });

  it('a float stored in local memory stays opaque; an address not known statically leaves the depot opaque: not-modelled where the value is needed', () => {
    const float = LANES.replace('st.local.u32 [%SPL+0], %r2;', 'mov.f32 %f1, 0f41000000;\n\tst.local.f32 [%SPL+0], %f1;');
    const r = check(program(float, 'float.ptx', { params: { n: 8 } }), { maxStates: 1000 });
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toMatch(/mbarrier\.init\.shared\.b64: the value of %r4 is not modelled/);
    expect(r.hazards[0]!.locations[0]!.line).toBe(27);
    const dynamic = LANES.replace('st.u32 [%SP+4], %r1;', 'mul.wide.u32 %rd3, %r1, 0;\n\tadd.u64 %rd3, %SP, %rd3;\n\tst.u32 [%rd3+4], %r1;');
    const m = parse(dynamic, 'dyn.ptx');
    const f = m.items.find((x) => x.kind === 'function')!;
    if (f.kind !== 'function') throw new Error('no function');
    expect([...localMemory(flatten(f, m), m).local.opaque]).toEqual([['__local_depot0', 'line 21: st.u32 through an address not known statically']]);
    const d = check(program(dynamic, 'dyn.ptx', { params: { n: 8 } }), { maxStates: 1000 });
    expect(d.verdict).toBe('not-modelled');
    expect(d.hazards[0]!.message).toMatch(/the value of %r\d is not modelled/);
  });

  it('accesses overlapping at different sizes (a bit-field object written as u32, copied as u64) leave only their bytes opaque: the count and lane ids stay modelled', () => {
    const overlap = LANES.replace('__local_depot0[8]', '__local_depot0[24]').replace('\tbar.sync 0;', [
      '\tbar.sync 0;',
      '\tmov.u64 %rd3, 5;',
      '\tst.u64 [%SP+8], %rd3;',
      '\tld.u32 %r6, [%SP+8];',
      '\tor.b32 %r6, %r6, 2;',
      '\tst.u32 [%SP+8], %r6;',
      '\tld.u64 %rd3, [%SP+8];',
      '\tst.u64 [%SP+16], %rd3;',
    ].join('\n'));
    const m = parse(overlap, 'overlap.ptx');
    const f = m.items.find((x) => x.kind === 'function')!;
    if (f.kind !== 'function') throw new Error('no function');
    const flat = localMemory(flatten(f, m), m);
    expect([flat.local.modelled, flat.local.opaque.size]).toEqual([['__local_depot0'], 0]);
    expect([...flat.local.overlaps]).toEqual([['__local_depot0', 'lines 30 and 31: accesses of 8 and 4 bytes at offsets 8 and 8 overlap']]);
    // the four accesses of bytes 8-15 are left as they were; the copy to +16 is a cell (stored from an opaque load)
    const left = flat.items.flatMap((x) => (!('label' in x) && /^(ld|st)$/.test(x.ins.base) && !x.ins.mods.includes('param') ? [x.ins.pos.line] : []));
    expect(left).toEqual([30, 31, 33, 34]);
    expect(check(program(overlap, 'overlap.ptx', { params: { n: 8 } }), { maxStates: 1000 }).verdict).toBe('ok');
    expect(check(program(overlap, 'overlap.ptx', { params: { n: 9 } }), { maxStates: 1000 }).verdict).toBe('hang');
  });

  it('local and .global addresses are integers of their own: a null test of either computes, and the depot stays modelled', () => {
    const nulls = LANES.replace('.visible .entry', '.global .align 4 .b8 gsym[4];\n\n.visible .entry')
      .replace('\tbar.sync 0;', '\tbar.sync 0;\n\tsetp.eq.u64 %p3, %SP, 0;\n\t@%p3 bra WAIT;\n\tmov.u64 %rd3, gsym;\n\tsetp.eq.u64 %p3, %rd3, 0;\n\t@%p3 bra WAIT;');
    const m = parse(nulls, 'nulls.ptx');
    const f = m.items.find((x) => x.kind === 'function')!;
    if (f.kind !== 'function') throw new Error('no function');
    const flat = localMemory(flatten(f, m), m);
    expect([flat.local.modelled, flat.local.opaque.size]).toEqual([['__local_depot0'], 0]);
    const p = program(nulls, 'nulls.ptx', { params: { n: 8 } });
    expect(simulate(p).verdict).toBe('ok');
    expect(check(program(nulls, 'nulls.ptx', { params: { n: 9 } }), { maxStates: 1000 }).verdict).toBe('hang');
  });

  it('ring3_debug.ptx: the by-reference arguments of cuda::ptx (mbarrier_init\'s count at [%SP+8] and [%SP+12]) are the values the caller stored', () => {
    const m = parse(readFileSync(`${DIR}/ring3_debug.ptx`, 'utf8'), 'ring3_debug.ptx');
    const f = m.items.find((x) => x.kind === 'function' && x.entry)!;
    if (f.kind !== 'function') throw new Error('no entry');
    const flat = localMemory(flatten(f, m), m);
    expect(flat.local.opaque.size).toBe(0);
    expect(flat.local.modelled[0]).toBe('__local_depot4');
    // line 873: `ld.u32 %r2, [%rd2]` in mbarrier_init, inlined at its two call sites (lines 255, 281)
    const loads = flat.items.flatMap((x) => (!('label' in x) && x.ins.pos.line === 873 ? [x.ins.operands[1]] : []));
    expect(loads.map((o) => (o?.kind === 'name' ? o.name : ''))).toEqual(expect.arrayContaining(['__local_depot4+8', '__local_depot4+12']));
    const s = simulate(trial('ring3_debug.ptx', { params: { param_2: 4 } }));
    expect(s.verdict).toBe('ok');
    // 4 tiles: 4 producer arrives on full[0..2], 2 consumer warps × 4 releases on empty[0..2]
    expect((s.events ?? []).filter((e) => e.e === 'arrive').length).toBe(4 + 8);
    expect((s.events ?? []).filter((e) => e.e === 'phase').length).toBe(4 + 4);
  }, 60_000);
});

describe('the -G trial kernels check with the verdicts of their -lineinfo twins', () => {
  // [‑G file, -lineinfo twin, launch]: ring3 at two tiles (4,000 states at four under -G).
  const PAIRS: [string, string, PtxLaunch][] = [
    ['ring3_debug.ptx', 'ring3.ptx', { params: { param_2: 2 } }],
    ['planted/ring3_debug.bug1.ptx', 'planted/ring3.bug1.ptx', { params: { param_2: 2 } }],
    ['planted/ring3_debug.bug2.ptx', 'planted/ring3.bug2.ptx', { params: { param_2: 2 } }],
    ['named_debug.ptx', 'named.ptx', { params: { param_2: 3 } }],
    ['planted/named_debug.bug1.ptx', 'planted/named.bug1.ptx', { params: { param_2: 3 } }],
    ['acquire_debug.ptx', 'acquire.ptx', { params: { param_1: 4 } }],
    ['planted/acquire_debug.bug1.ptx', 'planted/acquire.bug1.ptx', { params: { param_1: 4 } }],
    ['ampere_debug.ptx', 'ampere.ptx', { params: { param_2: 2 } }],
    ['planted/ampere_debug.bug1.ptx', 'planted/ampere.bug1.ptx', { params: { param_2: 2 } }],
    ['proxy_debug.ptx', 'proxy.ptx', { params: { param_1: 2 } }],
    ['planted/proxy_debug.bug1.ptx', 'planted/proxy.bug1.ptx', { params: { param_1: 2 } }],
  ];
  for (const [g, twin, launch] of PAIRS) {
    it(`${g} ≡ ${twin}`, () => {
      const a = verdict(g, launch);
      const b = verdict(twin, launch);
      expect(a).toEqual(b);
      expect(a.complete || a.v !== 'ok').toBe(true);
    }, 120_000);
  }
  it('the verdicts themselves: OK, race on stage[0], hang; race on tile[0]; race on slot[0]; race on buf[0]; missing fence on stage[0..15]', () => {
    expect(verdict('planted/ring3_debug.bug1.ptx', { params: { param_2: 2 } })).toMatchObject({ v: 'race', subject: 'stage[0]' });
    // The bulk store reads the whole 2 KiB tile, every one of its 128-byte elements (one warp's st.shared bytes): stage[0..15].
    expect(verdict('planted/proxy_debug.bug1.ptx', { params: { param_1: 2 } })).toMatchObject({ v: 'missing-fence', subject: 'stage[0..15]' });
  }, 120_000);
});
