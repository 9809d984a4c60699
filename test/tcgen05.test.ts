import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { tcFenceChecks } from '../src/check/tcfence.js';
import { kernel } from '../src/kernel/builder.js';
import { parseSketch } from '../src/lang/index.js';
import { Machine } from '../src/machine/machine.js';
import { explainHang } from '../src/machine/hang.js';
import { instantiate, KernelError, type Program } from '../src/machine/program.js';
import { newStepOut, type MachineState } from '../src/machine/state.js';
import { simulate } from '../src/sim/simulate.js';

/** Tensor Memory allocation, asynchronous tcgen05 data movement and fences (PTX ISA §9.7.16.7–§9.7.16.11). */

const HEAD = 'kernel k arch=sm_100a\nbarrier done count=1\nsmem A bytes=4096\n';
function program(body: string): Program {
  const r = parseSketch(HEAD + body, 'k.mbk');
  expect(r.diagnostics.map((d) => d.message)).toEqual([]);
  return instantiate(r.kernel!);
}
/** Runs agent steps (lowest enabled agent first, async ops as soon as they are enabled) to the end; returns the state and the diagnostic codes. */
function run(p: Program): { s: MachineState; codes: string[]; m: Machine } {
  const m = new Machine(p);
  const out = newStepOut(true);
  const s = m.initial(out);
  const codes: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const ch = m.enabled(s);
    if (!ch.length) break;
    const c = ch.find((x) => x.kind === 'async') ?? ch[0]!;
    m.apply(s, c, out);
    for (const d of out.diags) codes.push(d.diag.code);
  }
  return { s, codes, m };
}

describe('Tensor Memory allocation', () => {
  test('alloc takes the declared columns, dealloc returns them; a clean run reports nothing', () => {
    const p = program('tmem acc[2] bytes=4096 cols=256\nrole w warps=1 per=one:\n    tcgen05.alloc acc[0]\n    tcgen05.alloc acc[1]\n    tcgen05.dealloc acc[1]\n    tcgen05.dealloc acc[0]\n');
    expect(p.tmemCols).toEqual([256, 256]);
    const m = new Machine(p);
    const out = newStepOut(true);
    const s = m.initial(out);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(s.agents[0]!.tmemHeld).toBe(0b01);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(s.agents[0]!.tmemHeld).toBe(0b11);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(s.agents[0]!.tmemHeld).toBe(0b01);
    expect(s.agents[0]!.tmemFreed).toBe(0b10);
    expect(run(p).codes).toEqual([]);
  });
  test('alloc blocks while too few of the 512 columns are free, and the hang names the holder', () => {
    const p = program('tmem a bytes=64 cols=512\ntmem b bytes=64 cols=32\nrole w0 warps=1 per=one:\n    tcgen05.alloc a\nrole w1 warps=1 per=one:\n    tcgen05.alloc b\n    tcgen05.dealloc b\n');
    const m = new Machine(p);
    const out = newStepOut(true);
    const s = m.initial(out);
    m.apply(s, { kind: 'agent', agent: 0 }, out); // w0 takes all 512 and exits with them
    expect(out.diags.map((d) => d.diag.code)).toEqual([]);
    expect(m.agentEnabled(s, 1)).toBe(false);
    const h = explainHang(m, s);
    expect(h.waiters).toHaveLength(1);
    expect(h.waiters[0]!.reasons.join(' ')).toContain('needs 32 Tensor Memory columns; the CTA has 0 of 512 free (w0 holds 512 (exited without tcgen05.dealloc))');
    expect(h.waiters[0]!.reasons.join(' ')).toContain('can never be satisfied');
  });
  test('use after dealloc, leak at exit, alloc after relinquish, dealloc of what another warp holds', () => {
    const after = program('tmem acc bytes=64 cols=32\nrole w warps=1 per=one:\n    tcgen05.alloc acc\n    tcgen05.dealloc acc\n    tcgen05.ld acc\n');
    expect(run(after).codes).toEqual(['tmem-unallocated']);
    const leak = program('tmem acc bytes=64 cols=32\nrole w warps=1 per=one:\n    tcgen05.alloc acc\n');
    expect(run(leak).codes).toEqual(['tmem-leak']);
    const rel = program('tmem acc bytes=64 cols=32\nrole w warps=1 per=one:\n    tcgen05.relinquish_alloc_permit\n    tcgen05.alloc acc\n    tcgen05.dealloc acc\n');
    expect(run(rel).codes).toEqual(['tmem-alloc-after-relinquish']);
    const other = program('tmem acc bytes=64 cols=32\nrole w0 warps=1 per=one:\n    tcgen05.alloc acc\n    mbarrier.arrive done\n    tcgen05.dealloc acc\nrole w1 warps=1 per=one:\n    mbarrier.try_wait.parity done, 0\n    tcgen05.dealloc acc\n');
    expect(run(other).codes).toEqual(['tmem-alloc-state']);
    const before = program('tmem acc bytes=64 cols=32\nrole w warps=1 per=one:\n    tcgen05.mma acc, A shape=64x64x16\n');
    expect(run(before).codes).toEqual(['tmem-unallocated']);
  });
  test('bad column counts and alloc of unmanaged TMEM are kernel errors', () => {
    const bad = (decl: string) => parseSketch(HEAD + decl + 'role w warps=1 per=one:\n    tcgen05.alloc acc\n', 'k.mbk').diagnostics.map((d) => d.message).join(' ');
    for (const cols of [16, 48, 1024]) expect(bad(`tmem acc bytes=64 cols=${cols}\n`)).toMatch(/power of two of at least 32 and at most 512/);
    expect(bad('tmem acc bytes=64\n')).toMatch(/only a TMEM buffer declared with cols=N is allocated/);
    const k = kernel('b', { arch: 'sm_100a' }).tmem('acc', 1, 64).role('w', { warps: 1, per: 'one' }, (r) => r.tmemAlloc('acc[0]')).build();
    expect(() => instantiate(k)).toThrow(KernelError);
  });
  test('the builder declares managed TMEM and its operations', () => {
    const k = kernel('b', { arch: 'sm_100a' }).tmem('acc', 1, 64, 64).role('w', { warps: 1, per: 'one' }, (r) => r.tmemAlloc('acc[0]').tmemStore('acc[0]').tmemWaitSt().tmemDealloc('acc[0]')).build();
    const p = instantiate(k);
    expect(p.tmemCols).toEqual([64]);
    expect(run(p).codes).toEqual([]);
  });
});

describe('asynchronous tcgen05.ld / st, cp, shift', () => {
  test('wait::ld blocks while the load is in flight; a store of its registers before the wait is reported', () => {
    const p = program('tmem acc bytes=64\nsmem C bytes=64\nrole w warps=1 per=one:\n    tcgen05.ld.sync.aligned acc\n    st.shared C\n    tcgen05.wait::ld\n    st.shared C\n');
    const m = new Machine(p);
    const out = newStepOut(true);
    const s = m.initial(out);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(s.inflight.map((o) => o.kind)).toEqual(['tc.ld']);
    expect(s.agents[0]!.tcLdUnwaited).toBe(1);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(out.diags.map((d) => d.diag.code)).toEqual(['tmem-ld-unwaited']);
    expect(m.agentEnabled(s, 0)).toBe(false); // wait::ld with the load in flight
    m.apply(s, { kind: 'async', id: s.inflight[0]!.id }, out);
    expect(m.agentEnabled(s, 0)).toBe(true);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(s.agents[0]!.tcLdUnwaited).toBe(0);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(out.diags).toEqual([]);
  });
  test('cp and shift are in the issuer\'s tcgen05 order: a commit lands only after them', () => {
    const p = program('tmem acc bytes=64\nrole w warps=1 per=one:\n    tcgen05.cp acc, A\n    tcgen05.shift acc\n    tcgen05.commit done\n');
    const m = new Machine(p);
    const out = newStepOut(true);
    const s = m.initial(out);
    for (let i = 0; i < 3; i++) m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(s.inflight.map((o) => [o.kind, o.seq])).toEqual([['tc.cp', 0], ['tc.shift', 1], ['tc.commit', 2]]);
    expect(s.inflight[0]!.reads).toEqual([p.buffers.find((b) => b.name === 'A')!.offset]);
    expect(m.enabled(s).map((c) => (c.kind === 'async' ? s.inflight.find((o) => o.id === c.id)!.kind : 'agent'))).toEqual(['tc.cp']);
  });
  test('checker: an MMA reading TMEM a tcgen05.st may still write is a race; wait::st fixes it', () => {
    const body = (wait: string) => `tmem t bytes=64\ntmem acc bytes=64\nrole w warps=1 per=one:\n    tcgen05.st t\n${wait}    tcgen05.mma acc, t shape=64x64x16\n    tcgen05.commit done\n    mbarrier.try_wait.parity done, 0\n`;
    const bad = check(program(body('')), { all: true });
    expect(bad.hazards.map((h) => `${h.kind} ${h.subject?.name}`)).toContain('race t');
    expect(check(program(body('    tcgen05.wait::st\n')), { all: true }).verdict).toBe('ok');
  });
  test('checker: the MMA overwriting an accumulator the epilogue\'s asynchronous load still reads is a race', () => {
    const src = 'tmem acc bytes=64\nbarrier empty count=1\nrole mma warps=1 per=one:\n    tcgen05.mma acc, A shape=64x64x16\n    tcgen05.commit done\n    mbarrier.try_wait.parity empty, 0\n    tcgen05.mma acc, A shape=64x64x16\n    tcgen05.commit empty\n    mbarrier.try_wait.parity empty, 1\nrole epi warps=1 per=one:\n    mbarrier.try_wait.parity done, 0\n    tcgen05.ld.sync.aligned acc\n    mbarrier.arrive empty\n    tcgen05.wait::ld\n';
    const r = check(program(src), { all: true });
    expect(r.hazards.find((h) => h.kind === 'race')?.message).toContain('tcgen05.mma issued by mma writes acc while the tcgen05.ld issued by epi');
    const fixed = check(program(src.replace('    mbarrier.arrive empty\n    tcgen05.wait::ld\n', '    tcgen05.wait::ld\n    mbarrier.arrive empty\n')), { all: true });
    expect(fixed.verdict).toBe('ok');
  });
});

describe('TMEM lanes of the warps of a role', () => {
  test('tcgen05.st / ld of sibling warps touch their own 32 lanes each: no race; another role\'s store still races', () => {
    const own = 'tmem acc bytes=4096\nrole epi warps=4:\n    tcgen05.st acc\n    tcgen05.wait::st\n    tcgen05.ld.sync.aligned acc\n    tcgen05.wait::ld\n';
    expect(check(program(own), { all: true }).verdict).toBe('ok');
    const other = own + 'role w warps=1 per=one:\n    tcgen05.st acc\n    tcgen05.wait::st\n';
    expect(check(program(other), { all: true }).hazards.map((h) => h.kind)).toContain('race');
  });
});

describe('tcgen05 fences (static rule, --strict)', () => {
  const src = (after: string, before: string) => `tmem acc bytes=64\nbarrier empty count=1\nrole mma warps=1 per=one:\n    tcgen05.mma acc, A shape=64x64x16\n    tcgen05.commit done\nrole epi warps=1 per=one:\n    mbarrier.try_wait.parity done, 0\n${after}    tcgen05.ld acc\n${before}    mbarrier.arrive empty\nrole other warps=1 per=one:\n    mbarrier.try_wait.parity empty, 0\n    tcgen05.fence::after_thread_sync\n    tcgen05.shift acc\n`;
  test('a tcgen05 op after a wait on a commit barrier needs after_thread_sync; a release after tcgen05.ld needs before_thread_sync', () => {
    const w = tcFenceChecks(program(src('', '')));
    expect(w.map((h) => [h.kind, h.subject, h.locs[0]!.line])).toEqual([['missing-fence', 'acc', 11], ['missing-fence', 'acc', 12]]);
    expect(w[0]!.message).toContain('no tcgen05.fence::after_thread_sync');
    expect(w[1]!.message).toContain('no tcgen05.fence::before_thread_sync');
    expect(tcFenceChecks(program(src('    tcgen05.fence::after_thread_sync\n', '    tcgen05.fence::before_thread_sync\n')))).toEqual([]);
  });
  test('a wait on a barrier only TMA and non-tcgen05 roles signal needs no fence; the warnings appear only under --strict', () => {
    const tma = 'tmem acc bytes=64\nbarrier full count=1\nrole load warps=1 per=one:\n    mbarrier.arrive.expect_tx full, 4096\n    cp.async.bulk.tensor A, 4096, full\nrole mma warps=1 per=one:\n    mbarrier.try_wait.parity full, 0\n    tcgen05.mma acc, A shape=64x64x16\n    tcgen05.commit done\n    mbarrier.try_wait.parity done, 0\n';
    expect(tcFenceChecks(program(tma)).map((h) => h.locs[0]!.line)).toEqual([]);
    const p = program(src('', ''));
    expect(check(p, { all: true }).warnings.filter((h) => h.kind === 'missing-fence')).toEqual([]);
    expect(check(p, { all: true, strict: true }).warnings.filter((h) => h.kind === 'missing-fence')).toHaveLength(2);
  });
});

describe('tcgen05.mma.cta_group::2 (a CTA pair)', () => {
  const src = (cluster: number) => `kernel k arch=sm_100a cluster=${cluster}\nbarrier done count=1\nsmem A bytes=4096\nsmem B bytes=4096\ntmem acc bytes=4096\nrole mma warps=1 per=one cta=0:\n    tcgen05.mma.cta_group::2.kind::f16 acc, A, B shape=256x128x64\n    tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 done multicast=0b11\n`;
  test('one MMA per CTA of the pair, each on its tensor core, reading its A half and both B halves; the commit follows both', () => {
    const p = instantiate(parseSketch(src(2), 'k.mbk').kernel!);
    const key = (name: string, cta: number) => cta * p.buffersPerCta + p.buffers.find((b) => b.name === name)!.offset;
    const m = new Machine(p);
    const out = newStepOut(true);
    const s = m.initial(out);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    m.apply(s, { kind: 'agent', agent: 0 }, out);
    expect(s.inflight.map((o) => [o.kind, o.cta, o.buf, o.reads, o.seq, o.bytes])).toEqual([
      ['tc.mma', 0, key('acc', 0), [key('A', 0), key('B', 0), key('B', 1)], 0, 256 * 128 * 64],
      ['tc.mma', 1, key('acc', 1), [key('A', 1), key('B', 0), key('B', 1)], 1, 256 * 128 * 64],
      ['tc.commit', 0, -1, null, 2, 0],
    ]);
    expect(s.inflight[2]!.targets).toEqual([0, p.barriersPerCta]);
  });
  test('a cluster of odd size has no CTA pair', () => {
    expect(parseSketch(src(1), 'k.mbk').diagnostics.map((d) => d.message).join(' ')).toMatch(/runs on a CTA pair: the cluster has 1 CTA, it needs an even number/);
  });
});

/** `tcgen05.alloc` / `dealloc` / `relinquish_alloc_permit` with `.cta_group::2` (PTX ISA §9.7.16.7.1). */
describe('CTA-pair Tensor Memory allocation (.cta_group::2)', () => {
  const PAIR = 'kernel k arch=sm_100a cluster=2\nbarrier done count=1\nsmem A bytes=4096\n';
  const pairProgram = (body: string, head = PAIR): Program => {
    const r = parseSketch(head + body, 'k.mbk');
    expect(r.diagnostics.map((d) => d.message)).toEqual([]);
    return instantiate(r.kernel!);
  };
  const errors = (body: string, head = PAIR) => parseSketch(head + body, 'k.mbk').diagnostics.map((d) => d.message).join(' ');

  test('one warp of each CTA joins, does its CTA\'s half, and moves on: the columns are allocated in both CTAs', () => {
    const p = pairProgram('tmem acc bytes=64 cols=128\nrole w warps=1 per=one:\n    tcgen05.alloc.cta_group::2 acc\n    tcgen05.dealloc.cta_group::2 acc\n');
    expect(p.tmemPair).toBe(true);
    const m = new Machine(p);
    const out = newStepOut(true);
    const s = m.initial(out);
    const step = (a: number) => m.apply(s, { kind: 'agent', agent: a }, out);
    step(0); // w@c0 joins
    expect(s.agents[0]!.sub).toBe(0);
    expect(m.agentEnabled(s, 0)).toBe(false); // the peer has not issued it
    step(1); // w@c1 joins
    expect(m.agentEnabled(s, 0)).toBe(true);
    step(0); // w@c0 does CTA 0's half
    expect([s.agents[0]!.tmemHeld, s.agents[1]!.tmemHeld]).toEqual([1, 0]);
    expect(m.agentEnabled(s, 0)).toBe(false); // waits for the peer's half
    step(1); // w@c1 does CTA 1's half
    step(0);
    step(1);
    expect([s.agents[0]!.pc, s.agents[1]!.pc, s.agents[0]!.sub, s.agents[1]!.sub]).toEqual([1, 1, -1, -1]);
    expect([s.agents[0]!.tmemHeld, s.agents[1]!.tmemHeld]).toEqual([1, 1]);
    expect(out.diags).toEqual([]);
    const r = run(p);
    expect(r.codes).toEqual([]);
    expect(r.s.agents.map((a) => [a.status, a.tmemHeld, a.tmemFreed])).toEqual([['done', 0, 1], ['done', 0, 1]]);
    expect(check(p, { all: true }).verdict).toBe('ok');
    const sim = simulate(p);
    expect(sim.verdict).toBe('ok');
    expect(sim.diagnostics).toEqual([]);
  });

  test('only one CTA of the pair issuing it is a hang that names the peer CTA', () => {
    const p = pairProgram('tmem acc bytes=64 cols=128\nrole w warps=1 per=one:\n    if cta == 0:\n        tcgen05.alloc.cta_group::2 acc\n        tcgen05.dealloc.cta_group::2 acc\n');
    const { s, m } = run(p);
    expect(s.agents.map((a) => a.status)).toEqual(['run', 'done']);
    const h = explainHang(m, s);
    expect(h.waiters).toHaveLength(1);
    const why = h.waiters[0]!.reasons.join(' ');
    expect(why).toContain('w@c0 of CTA 0 waits for a warp of CTA 1, the other CTA of the pair, to issue tcgen05.alloc.cta_group::2 acc too');
    expect(why).toContain('w@c1 has exited');
    expect(why).toContain('the pair\'s allocation can never complete');
    expect(h.waiters[0]!.signallers).toEqual([]);
    const sim = simulate(p);
    expect(sim.verdict).toBe('hang');
    const r = check(p, { all: true });
    expect(r.verdict).toBe('hang');
    expect(r.hazards.map((x) => x.kind)).toContain('hang');
  });

  test('the two CTAs naming different elements, or one freeing while the other allocates, never meet', () => {
    const diff = pairProgram('tmem acc[2] bytes=64 cols=128\nrole w warps=1 per=one:\n    tcgen05.alloc.cta_group::2 acc[cta]\n    tcgen05.dealloc.cta_group::2 acc[cta]\n');
    const { s, m } = run(diff);
    expect(s.agents.map((a) => [a.status, a.sub])).toEqual([['run', 0], ['run', 0]]);
    expect(explainHang(m, s).waiters.map((w) => w.reasons[0])).toEqual([
      expect.stringContaining('to issue tcgen05.alloc.cta_group::2 acc[0] too'),
      expect.stringContaining('to issue tcgen05.alloc.cta_group::2 acc[1] too'),
    ]);
    expect(check(diff, { all: true }).verdict).toBe('hang');
  });

  test('a pair allocation takes the columns of both CTAs: a second one blocks while either CTA is full', () => {
    const p = pairProgram('tmem a bytes=64 cols=512\ntmem b bytes=64 cols=32\nrole w warps=1 per=one:\n    tcgen05.alloc.cta_group::2 a\n    tcgen05.alloc.cta_group::2 b\n');
    const { s, m, codes } = run(p);
    expect(codes).toEqual([]);
    expect(s.agents.map((a) => [a.pc, a.sub, a.tmemHeld])).toEqual([[1, 0, 1], [1, 0, 1]]);
    const h = explainHang(m, s);
    expect(h.waiters[0]!.reasons.join(' ')).toContain('needs 32 Tensor Memory columns; the CTA has 0 of 512 free');
  });

  test('a relinquished permit of either CTA of the pair, and an odd or missing cluster, are reported', () => {
    const rel = pairProgram('tmem acc bytes=64 cols=32\nrole w warps=1 per=one:\n    if cta == 1:\n        tcgen05.relinquish_alloc_permit.cta_group::2\n    bar.sync 0\n    tcgen05.alloc.cta_group::2 acc\n    tcgen05.dealloc.cta_group::2 acc\n');
    expect(run(rel).codes).toEqual(['tmem-alloc-after-relinquish', 'tmem-alloc-after-relinquish']);
    const body = 'tmem acc bytes=64 cols=32\nrole w warps=1 per=one:\n    tcgen05.alloc.cta_group::2 acc\n    tcgen05.dealloc.cta_group::2 acc\n';
    expect(errors(body, HEAD)).toMatch(/tcgen05\.alloc\.cta_group::2 runs on a CTA pair: the cluster has 1 CTA, it needs an even number \(.*this launch is not a cluster launch/);
    expect(errors(body, PAIR.replace('cluster=2', 'cluster=3'))).toMatch(/the cluster has 3 CTAs, it needs an even number/);
    expect(errors('tmem acc bytes=64 cols=32\nrole w warps=1 per=one:\n    tcgen05.alloc.cta_group::2 acc\n    tcgen05.dealloc acc\n')).toMatch(/name different \.cta_group: every tcgen05\.alloc, dealloc and relinquish_alloc_permit of a kernel must use the same one/);
  });

  test('PTX spellings, the builder and the text', () => {
    const p = pairProgram('tmem acc bytes=64 cols=64\nrole w warps=1 per=one:\n    tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 acc\n    tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned\n    tcgen05.dealloc.cta_group::2.sync.aligned.b32 acc\n');
    const ops = p.roles[0]!.code.filter((i) => i.i === 'op').map((i) => (i as { text: string }).text);
    expect(ops).toEqual(['tcgen05.alloc.cta_group::2 acc', 'tcgen05.relinquish_alloc_permit.cta_group::2', 'tcgen05.dealloc.cta_group::2 acc']);
    expect(run(p).codes).toEqual([]);
    const k = kernel('b', { arch: 'sm_100a', cluster: 2 }).tmem('acc', 1, 64, 64).role('w', { warps: 1, per: 'one' }, (r) => r.tmemAlloc('acc[0]', { pair: true }).tmemStore('acc[0]').tmemWaitSt().tmemDealloc('acc[0]', { pair: true })).build();
    const b = instantiate(k);
    expect(b.tmemPair).toBe(true);
    expect(run(b).codes).toEqual([]);
  });
});
