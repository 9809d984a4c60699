import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { kernel } from '../src/kernel/builder.js';
import { parseSketch } from '../src/lang/index.js';
import { Machine } from '../src/machine/machine.js';
import { accessesOf, asyncDef, asyncProxyOp, OPC, opDef } from '../src/machine/ops/index.js';
import { instantiate, type Program } from '../src/machine/program.js';
import { pendingAsyncGroups, type AsyncOp, type MachineState } from '../src/machine/state.js';
import { simulate } from '../src/sim/simulate.js';

/**
 * The asynchronous copy family beyond TMA loads and bulk stores: Ampere cp.async groups,
 * st.async / red.async, the DSMEM bulk copy shared::cta → shared::cluster, cp.reduce.async.bulk and
 * the bulk prefetches: their machine semantics (stepping the machine by hand) and what the
 * checker reports on them.
 */

/** Steps agent `a` once. */
const stepAgent = (m: Machine, s: MachineState, a = 0) => m.step(s, { kind: 'agent', agent: a });
/** Lands the in-flight operation `o`. */
const land = (m: Machine, s: MachineState, o: AsyncOp) => m.step(s, { kind: 'async', id: o.id });
const sketch = (src: string): Program => {
  const r = parseSketch(src, 't.mbk');
  expect(r.diagnostics).toEqual([]);
  return instantiate(r.kernel!);
};

describe('cp.async groups (PTX ISA §9.7.9.25.3)', () => {
  const twoGroups = () => {
    const k = kernel('g');
    k.smem('A', 2, 4096);
    k.role('w', { warps: 1, per: 'thread' }, (r) => {
      r.cpAsync('A[0]', 16).cpAsyncCommit().cpAsync('A[1]', 16).cpAsyncCommit().cpAsyncWait(1).read('A[0]').cpAsyncWait('all').read('A[1]');
    });
    return instantiate(k.build());
  };
  test('each copy belongs to the open group; wait_group 1 waits for the older group only', () => {
    const m = new Machine(twoGroups());
    let s = m.initial();
    for (let i = 0; i < 4; i++) s = stepAgent(m, s).state; // two copies, two commits
    expect(s.agents[0]!.cpGroup).toBe(2);
    expect(s.inflight.map((o) => [o.kind, o.group])).toEqual([['cp.async', 0], ['cp.async', 1]]);
    expect(pendingAsyncGroups(s, 0, 'cp.async')).toBe(2);
    expect(m.agentEnabled(s, 0)).toBe(false); // wait_group 1 with two pending
    // The younger group landing first leaves the older one pending: still blocked (FIFO completion).
    const younger = land(m, s, s.inflight[1]!).state;
    expect(pendingAsyncGroups(younger, 0, 'cp.async')).toBe(2);
    expect(m.agentEnabled(younger, 0)).toBe(false);
    s = land(m, s, s.inflight[0]!).state;
    expect(pendingAsyncGroups(s, 0, 'cp.async')).toBe(1);
    expect(m.agentEnabled(s, 0)).toBe(true);
    s = stepAgent(m, s).state; // wait_group 1
    s = stepAgent(m, s).state; // ld.shared A[0]
    expect(m.agentEnabled(s, 0)).toBe(false); // wait_all: A[1] still in flight
    s = land(m, s, s.inflight[0]!).state;
    const r = stepAgent(m, s);
    expect(r.state.agents[0]!.cpGroup).toBe(3); // wait_all commits a group of its own
    expect(r.events.find((e) => e.e === 'op')).toMatchObject({ op: 'cp.async.wait_group', text: 'cp.async.wait_all', n: 0 });
  });
  test('an empty group is trivially complete: wait_group 0 after commit with nothing issued passes', () => {
    const k = kernel('e');
    k.role('w', { warps: 1, per: 'thread' }, (r) => { r.cpAsyncCommit().cpAsyncWait(0); });
    const m = new Machine(instantiate(k.build()));
    const s = stepAgent(m, m.initial()).state;
    expect(pendingAsyncGroups(s, 0, 'cp.async')).toBe(0);
    expect(m.agentEnabled(s, 0)).toBe(true);
  });
  test('cp.async writes are generic-proxy writes (§9.7.9.25.3.1); groups are per warp of a role', () => {
    expect(asyncDef('cp.async').bufAccess).toEqual({ rw: 'w', proxy: 'generic' });
    expect(asyncProxyOp(OPC['cp.async'])).toBe(false);
    expect(opDef('cp.async.wait_group').sync).toBe('group-wait');
    expect(opDef('cp.async.commit_group').por).toBe('local');
    const k = kernel('w4');
    k.smem('A', 4, 4096);
    k.role('w', { warps: 4, per: 'thread' }, (r) => { r.cpAsync('A[warp]', 16).cpAsyncCommit().cpAsyncWait(0).read('A[warp]'); });
    const m = new Machine(instantiate(k.build()));
    let s = m.initial();
    for (const a of [0, 0, 1, 1]) s = stepAgent(m, s, a).state;
    s = land(m, s, s.inflight.find((o) => o.agent === 0)!).state;
    expect([0, 1].map((a) => m.agentEnabled(s, a))).toEqual([true, false]); // warp 1's copy is still in flight
  });
  test('check: a read before the wait_group that covers the copy is a race; the fixed order is ok', () => {
    const bug = check(sketch(`kernel g arch=sm_90a
smem A[2] bytes=4096
role w warps=1:
    cp.async A[0], 16
    cp.async.commit_group
    cp.async A[1], 16
    cp.async.commit_group
    cp.async.wait_group 1
    ld.shared A[1]
    cp.async.wait_all
`));
    expect(bug.verdict).toBe('race');
    expect(bug.hazards[0]!.message).toContain('while the cp.async issued by w (line 6) is still writing it');
    const fixed = check(sketch(`kernel g arch=sm_90a
smem A[2] bytes=4096
role w warps=1:
    cp.async A[0], 16
    cp.async.commit_group
    cp.async A[1], 16
    cp.async.commit_group
    cp.async.wait_group 1
    ld.shared A[0]
    cp.async.wait_group 0
    ld.shared A[1]
`), { all: true });
    expect(fixed.verdict).toBe('ok');
  });
  test('check: another warp reading the tile needs a bar.sync after the issuer\'s wait_group', () => {
    const src = (sync: string) => `kernel g arch=sm_90a
smem A[1] bytes=4096
role w warps=2:
    if warp == 0:
        cp.async A[0], 16
        cp.async.wait_all
${sync}    if warp == 1:
        ld.shared A[0]
`;
    expect(check(sketch(src(''))).verdict).toBe('race');
    expect(check(sketch(src('    bar.sync 1, 64\n')), { all: true }).verdict).toBe('ok');
  });
});

describe('st.async and red.async (PTX ISA §9.7.9.12, §9.7.13.7)', () => {
  const pair = (op: string, dst: string, bar: string) => `kernel s arch=sm_90a cluster=2
barrier full[1] count=1 cta=1
smem R[1] bytes=128
role sender warps=1 cta=0:
    barrier.cluster.arrive
    barrier.cluster.wait
    ${op} ${dst}, 4, ${bar} per=thread
    barrier.cluster.arrive
    barrier.cluster.wait
role recv warps=1 cta=1:
    mbarrier.arrive.expect_tx full[0], 128 per=one
    barrier.cluster.arrive
    barrier.cluster.wait
    mbarrier.try_wait.parity full[0], 0
    ld.shared R[0]
    barrier.cluster.arrive
    barrier.cluster.wait
`;
  test('one store of the threads\' bytes into the peer, then complete_tx of them on the peer\'s barrier', () => {
    const p = sketch(pair('st.async', 'R[0]@1', 'full[0]@1'));
    const m = new Machine(p);
    let s = m.initial();
    s = stepAgent(m, s, 1).state; // recv: arrive.expect_tx 128
    for (const a of [0, 1]) s = stepAgent(m, s, a).state; // cluster arrive
    for (const a of [0, 1]) s = stepAgent(m, s, a).state; // cluster wait
    const r = stepAgent(m, s, 0);
    const o = r.state.inflight[0]!;
    expect([o.kind, o.bytes, p.bufferName(o.buf), p.barrierName(o.bar)]).toEqual(['st.async', 128, 'R[0]@c1', 'full[0]@c1']);
    expect(accessesOf(o)).toEqual([{ buf: o.buf, rw: 'w' }]);
    expect(asyncDef('st.async').bufAccess).toEqual({ rw: 'w', proxy: 'generic' });
    const l = land(m, r.state, o);
    expect(l.events.filter((e) => e.e === 'complete_tx').map((e) => (e as { bytes: number }).bytes)).toEqual([128]);
    expect(l.events.some((e) => e.e === 'phase')).toBe(true);
    expect(l.state.bars[o.bar]!.phase).toBe(1);
  });
  test('check: the receiver reading before its wait is a race; after it, ok; the simulator runs it', () => {
    const ok = sketch(pair('st.async', 'R[0]@1', 'full[0]@1'));
    expect(check(ok, { all: true }).verdict).toBe('ok');
    expect(simulate(ok).verdict).toBe('ok');
    const bug = pair('st.async', 'R[0]@1', 'full[0]@1').replace('    mbarrier.try_wait.parity full[0], 0\n    ld.shared R[0]\n', '    ld.shared R[0]\n    mbarrier.try_wait.parity full[0], 0\n');
    const r = check(sketch(bug));
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toContain('while the st.async issued by sender@c0 (line 7) is still writing it; its completion signals full[0]@c1');
  });
  test('red.async into the peer is defined; into its own CTA, or with the barrier in another CTA than the data, is async-store-target', () => {
    expect(check(sketch(pair('red.async.add', 'R[0]@1', 'full[0]@1')), { all: true }).verdict).toBe('ok');
    const one = (dst: string, bar: string, red: boolean) => {
      const k = kernel('r', { cluster: 2 });
      k.barriers('b', 1, { count: 1 });
      k.smem('R', 1, 128);
      k.role('w', { warps: 1, per: 'one', where: 'cta == 0' }, (r) => { r.stAsync(dst, 4, bar, { red }); });
      return simulate(instantiate(k.build())).diagnostics.map((d) => [d.diag.code, d.diag.message]);
    };
    expect(one('R[0]', 'b[0]', true)).toEqual([['async-store-target', 'red.async R[0], 4, b[0]: its destination R[0]@c0 is in the executing CTA; it must be another CTA of the cluster']]);
    expect(one('R[0]', 'b[0]', false)).toEqual([]); // st.async may store into its own CTA
    expect(one('R[0]@1', 'b[0]', false)).toEqual([['async-store-target', 'st.async R[0]@1, 4, b[0]: its mbarrier b[0]@c0 is in CTA 0 but its destination R[0]@c1 is in CTA 1; both must be in one CTA']]);
  });
  test('a cluster of one CTA: st.async is undefined (%cluster_nctarank > 1 is required)', () => {
    const k = kernel('one');
    k.barriers('b', 1, { count: 1 });
    k.smem('R', 1, 128);
    k.role('w', { warps: 1, per: 'one' }, (r) => { r.stAsync('R[0]', 4, 'b[0]'); });
    const r = simulate(instantiate(k.build()));
    expect(r.diagnostics.map((d) => [d.diag.code, d.diag.message])).toEqual([['async-store-target', 'st.async R[0], 4, b[0]: the cluster has one CTA; the instruction requires %cluster_nctarank > 1']]);
  });
});

describe('cp.async.bulk.shared::cluster.shared::cta (PTX ISA §9.7.9.25.4.1)', () => {
  const src = (fence: boolean, reuse: boolean) => `kernel d arch=sm_90a cluster=2
barrier full[1] count=1 cta=1
smem S[1] bytes=4096
role sender warps=1 per=one cta=0:
    st.shared S[0]
${fence ? '    fence.proxy.async\n' : ''}    barrier.cluster.arrive
    barrier.cluster.wait
    cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes S[0]@1, S[0], 4096, full[0]@1
${reuse ? '    st.shared S[0]\n' : ''}    barrier.cluster.arrive
    barrier.cluster.wait
role recv warps=1 per=one cta=1:
    mbarrier.arrive.expect_tx full[0], 4096
    barrier.cluster.arrive
    barrier.cluster.wait
    mbarrier.try_wait.parity full[0], 0
    ld.shared S[0]
    barrier.cluster.arrive
    barrier.cluster.wait
`;
  test('reads its source and writes the peer\'s buffer in the async proxy, credits the peer\'s barrier', () => {
    const p = sketch(src(true, false));
    const m = new Machine(p);
    let s = m.initial();
    // Agent steps only (no copy lands) until the sender rests on the copy.
    while (m.nextOp(s, 0)?.opc !== OPC['cp.async.bulk.shared::cluster']) s = m.step(s, m.enabled(s).find((c) => c.kind === 'agent')!).state;
    const r = stepAgent(m, s, 0);
    const o = r.state.inflight[0]!;
    expect([o.kind, p.bufferName(o.buf), (o.reads ?? []).map((b) => p.bufferName(b)), p.barrierName(o.bar)]).toEqual(['dsmem', 'S[0]@c1', ['S[0]@c0'], 'full[0]@c1']);
    expect(accessesOf(o).map((x) => x.rw)).toEqual(['w', 'r']);
    expect(asyncProxyOp(OPC['cp.async.bulk.shared::cluster'])).toBe(true);
    const l = land(m, r.state, o);
    expect(l.state.bars[o.bar]!.phase).toBe(1);
  });
  test('check: ok with the proxy fence; missing-fence without; rewriting the source while the copy reads it is a race', () => {
    expect(check(sketch(src(true, false)), { all: true }).verdict).toBe('ok');
    expect(check(sketch(src(false, false))).verdict).toBe('missing-fence');
    const r = check(sketch(src(true, true)));
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toContain('while the DSMEM bulk copy issued by sender@c0 (line 9) is still reading it');
  });
  test('a destination in the issuing CTA is async-store-target; the size must be a multiple of 16', () => {
    const k = kernel('d', { cluster: 2 });
    k.barriers('b', 1, { count: 1 });
    k.smem('S', 2, 4096);
    k.role('w', { warps: 1, per: 'one', where: 'cta == 0' }, (r) => { r.dsmemCopy('S[1]', 'S[0]', 4096, 'b[0]'); });
    expect(simulate(instantiate(k.build())).diagnostics.map((d) => d.diag.code)).toEqual(['async-store-target']);
    const k2 = kernel('d', { cluster: 2 });
    k2.barriers('b', 1, { count: 1 });
    k2.smem('S', 1, 4096);
    k2.role('w', { warps: 1, per: 'one', where: 'cta == 0' }, (r) => { r.dsmemCopy('S[0]@1', 'S[0]', 100, 'b[0]@1'); });
    expect(simulate(instantiate(k2.build())).diagnostics.map((d) => d.diag.code)).toEqual(['bulk-size']);
  });
});

describe('cp.reduce.async.bulk and bulk prefetch (PTX ISA §9.7.9.25.4.2, §9.7.9.25.4.3)', () => {
  const epi = (n: number) => `kernel r arch=sm_90a
smem C[1] bytes=8192
role epi warps=1 per=one:
    for t in range(0, 3):
        st.shared C[0]
        fence.proxy.async
        cp.reduce.async.bulk.global.shared::cta.bulk_group.add C[0], 8192
        cp.async.bulk.commit_group
        cp.async.bulk.wait_group.read ${n}
`;
  test('a reduction reads its source in the async proxy as a member of the open bulk group', () => {
    const p = sketch(epi(0));
    const m = new Machine(p);
    let s = m.initial();
    for (let i = 0; i < 2; i++) s = stepAgent(m, s).state;
    const r = stepAgent(m, s);
    const o = r.state.inflight[0]!;
    expect([o.kind, o.group, p.bufferName(o.buf)]).toEqual(['bulk.store', 0, 'C[0]']);
    expect(accessesOf(o)).toEqual([{ buf: o.buf, rw: 'r' }]);
    expect(r.events.find((e) => e.e === 'op')).toMatchObject({ text: 'cp.reduce.async.bulk.add C[0], 8192' });
    const c = stepAgent(m, r.state).state; // commit_group
    expect(pendingAsyncGroups(c, 0, 'bulk.store')).toBe(1);
    expect(m.agentEnabled(c, 0)).toBe(false);
  });
  test('check: rewriting the source before wait_group.read covers the reduction is a race', () => {
    expect(check(sketch(epi(0)), { all: true }).verdict).toBe('ok');
    expect(check(sketch(epi(1))).verdict).toBe('race');
  });
  test('a prefetch changes nothing but time', () => {
    const mk = (prefetch: boolean) => {
      const k = kernel('p');
      k.role('w', { warps: 1, per: 'one' }, (r) => { if (prefetch) r.bulkPrefetch(4096, true); r.work(10); });
      return instantiate(k.build());
    };
    const m = new Machine(mk(true));
    const r = stepAgent(m, m.initial());
    expect(r.state.inflight).toEqual([]);
    expect(r.events.map((e) => e.e)).toEqual(['op']);
    expect(opDef('cp.async.bulk.prefetch').sync).toBe('local');
    const [a, b] = [simulate(mk(true)), simulate(mk(false))];
    expect(a.verdict).toBe('ok');
    expect(a.cycles).toBeGreaterThan(b.cycles);
    expect(check(mk(true)).verdict).toBe('ok');
  });
});
