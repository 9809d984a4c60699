import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { check, checkJson, renderCheck, replay, type TraceStep } from '../src/check/index.js';
import { groupNoteText } from '../src/check/report.js';
import { EXAMPLES } from '../src/examples/index.js';
import { parseSketch } from '../src/lang/index.js';
import { Machine, pendingAsyncGroups, type MachineState } from '../src/machine/machine.js';
import { instantiate, type Program } from '../src/machine/program.js';

function sketch(src: string, file = 'groups.mbk'): Program {
  const parsed = parseSketch(src, file);
  expect(parsed.diagnostics).toEqual([]);
  return instantiate(parsed.kernel!);
}

const fromFile = (path: string) => sketch(readFileSync(path, 'utf8'), path);

/** One warpgroup: two wgmma groups, then wait_group 0; then a bulk store group, wait_group.read 0. */
const GROUPS = `kernel groups arch=sm_90a
smem A[1] bytes=4096
smem C[1] bytes=4096
role w warps=4 per=one:
    wgmma.mma_async A[0] shape=64x128x16
    wgmma.commit_group
    wgmma.mma_async A[0] shape=64x128x16
    wgmma.commit_group
    wgmma.wait_group 0
    st.shared C[0]
    fence.proxy.async
    cp.async.bulk.store C[0], 4096
    cp.async.bulk.commit_group
    cp.async.bulk.wait_group.read 0
`;

describe('async-group notes on trace steps', () => {
  const prog = sketch(GROUPS);
  // Agent 0 issues and commits two wgmma groups (async ids 0 and 1) and parks at wait_group 0;
  // the groups complete one by one, the wait passes, then the bulk store (id 2) goes the same way.
  const A = 0;
  const done = (id: number) => -(id + 1);
  const schedule = [A, A, A, A, done(0), done(1), A, A, A, A, A, done(2), A];
  const { steps } = replay(prog, schedule);
  const at = (n: number): TraceStep => steps[n - 1]!;

  test('issue and commit steps carry no note', () => {
    expect(at(1).op).toMatch(/^wgmma\.mma_async/);
    for (const n of [1, 2, 3, 4, 8, 9, 10, 11]) expect(at(n).groups, `step ${n}`).toBeUndefined();
  });

  test('a completion that leaves the wait blocked, then one that wakes it', () => {
    expect(at(5).actor).toBe('wgmma (from w)');
    expect(at(5).groups).toEqual({ agent: 'w', kind: 'wgmma', before: 2, after: 1, waitN: 0, wait: 'waits' });
    expect(at(6).groups).toEqual({ agent: 'w', kind: 'wgmma', before: 1, after: 0, waitN: 0, wait: 'wakes' });
    expect(groupNoteText(at(5).groups!)).toBe("pending wgmma groups of w: 2 → 1 (> 0: w's wait_group 0 still waits)");
    expect(groupNoteText(at(6).groups!)).toBe("pending wgmma groups of w: 1 → 0 (≤ 0: w's wait_group 0 can pass now)");
  });

  test('the wait_group steps themselves', () => {
    expect(at(7).op).toBe('wgmma.wait_group 0');
    expect(at(7).groups).toEqual({ agent: 'w', kind: 'wgmma', before: 0, after: 0, waitN: 0, wait: 'passes' });
    expect(groupNoteText(at(7).groups!)).toBe('pending wgmma groups of w: 0 (≤ 0: wait_group 0 passes)');
    expect(at(12).actor).toBe('bulk store (from w)');
    expect(at(12).groups).toEqual({ agent: 'w', kind: 'bulk.store', before: 1, after: 0, waitN: 0, wait: 'wakes' });
    expect(at(13).op).toBe('cp.async.bulk.wait_group.read 0');
    expect(at(13).groups).toEqual({ agent: 'w', kind: 'bulk.store', before: 0, after: 0, waitN: 0, wait: 'passes' });
    expect(groupNoteText(at(13).groups!)).toBe('pending bulk-store groups of w: 0 (≤ 0: wait_group 0 passes)');
  });

  test('a completion while the issuer is not at a wait_group has no wait status', () => {
    // The first wgmma lands while w is still issuing (before the second commit).
    const r = replay(prog, [A, A, done(0)]).steps[2]!;
    expect(r.groups).toEqual({ agent: 'w', kind: 'wgmma', before: 1, after: 0, waitN: null, wait: null });
    expect(groupNoteText(r.groups!)).toBe('pending wgmma groups of w: 1 → 0');
    // A wgmma of the open (uncommitted) group retires no committed group: no note.
    expect(replay(prog, [A, done(0)]).steps[1]!.groups).toBeUndefined();
  });
});

test('a completion while the issuer rests at a wait_group that could already pass: no wake', () => {
  const prog = sketch(`kernel g1 arch=sm_90a
smem A[1] bytes=4096
role w warps=4 per=one:
    wgmma.mma_async A[0] shape=64x128x16
    wgmma.commit_group
    wgmma.wait_group 1
`);
  // After issue and commit, w rests at wait_group 1 with 1 group pending: it may pass already.
  const { steps } = replay(prog, [0, 0, -1, 0]);
  expect(steps[2]!.groups).toEqual({ agent: 'w', kind: 'wgmma', before: 1, after: 0, waitN: 1, wait: null });
  expect(groupNoteText(steps[2]!.groups!)).toBe('pending wgmma groups of w: 1 → 0');
  expect(steps[3]!.groups).toEqual({ agent: 'w', kind: 'wgmma', before: 0, after: 0, waitN: 1, wait: 'passes' });
  // Passing first, with the group still pending.
  expect(replay(prog, [0, 0, 0]).steps[2]!.groups).toEqual({ agent: 'w', kind: 'wgmma', before: 1, after: 1, waitN: 1, wait: 'passes' });
});

/** Groups of both kinds in flight at once (wgmma group 0, bulk-store groups 0 and 1). */
const MIXED = `kernel mixed arch=sm_90a
smem A[1] bytes=4096
smem C[2] bytes=4096
role w warps=4 per=one:
    wgmma.mma_async A[0] shape=64x128x16
    wgmma.commit_group
    st.shared C[0]
    st.shared C[1]
    fence.proxy.async
    cp.async.bulk.store C[0], 4096
    cp.async.bulk.commit_group
    cp.async.bulk.store C[1], 4096
    cp.async.bulk.commit_group
    cp.async.bulk.wait_group.read 1
    cp.async.bulk.wait_group.read 0
    wgmma.wait_group 0
`;

test('each kind counts its own groups: bulk stores retire while a wgmma group is still pending', () => {
  const prog = sketch(MIXED);
  // w runs up to its first wait (9 steps); the stores (ids 1, 2) land, the waits pass, then the wgmma (id 0).
  const { steps } = replay(prog, [0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -3, 0, 0, -1, 0]);
  expect(steps.map((x) => x.groups ?? null).filter(Boolean)).toEqual([
    { agent: 'w', kind: 'bulk.store', before: 2, after: 1, waitN: 1, wait: 'wakes' },
    { agent: 'w', kind: 'bulk.store', before: 1, after: 0, waitN: 1, wait: null },
    { agent: 'w', kind: 'bulk.store', before: 0, after: 0, waitN: 1, wait: 'passes' },
    { agent: 'w', kind: 'bulk.store', before: 0, after: 0, waitN: 0, wait: 'passes' },
    { agent: 'w', kind: 'wgmma', before: 1, after: 0, waitN: 0, wait: 'wakes' },
    { agent: 'w', kind: 'wgmma', before: 0, after: 0, waitN: 0, wait: 'passes' },
  ]);
  expect(steps[13]!.actor).toBe('wgmma (from w)');
});

describe('counterexamples', () => {
  test('B15: the wait_group that lets a wgmma outlive its stage (text and JSON)', () => {
    const r = check(fromFile('examples/bugs/B15.mbk'));
    expect(r.verdict).toBe('race');
    const h = r.hazards[0]!;
    const waits = h.trace.filter((s) => s.groups);
    expect(waits.map((s) => [s.op, s.groups])).toEqual([
      ['wgmma.wait_group 1', { agent: 'consumer.w0', kind: 'wgmma', before: 1, after: 1, waitN: 1, wait: 'passes' }],
    ]);
    const n = waits[0]!.n;
    const text = renderCheck(r);
    const lines = text.split('\n');
    const i = lines.findIndex((l) => l.startsWith(`   ${n}`) && l.includes('wgmma.wait_group 1'));
    expect(lines[i + 1]!.trim()).toBe('pending wgmma groups of consumer.w0: 1 (≤ 1: wait_group 1 passes)');
    const json = checkJson(r) as { hazards: { trace: TraceStep[] }[] };
    const js = JSON.parse(JSON.stringify(json)) as typeof json;
    expect(js.hazards[0]!.trace[n - 1]!.groups).toEqual({ agent: 'consumer.w0', kind: 'wgmma', before: 1, after: 1, waitN: 1, wait: 'passes' });
    expect(js.hazards[0]!.trace.filter((s) => 'groups' in s)).toHaveLength(1);
  });

  test('B12 --all: the bulk store that wakes the wait_group.read, then the wait', () => {
    const r = check(fromFile('examples/bugs/B12.mbk'), { all: true });
    const h = r.hazards.find((x) => x.trace.some((s) => s.op.startsWith('cp.async.bulk.wait_group.read')))!;
    const text = renderCheck(r);
    const noted = h.trace.filter((s) => s.groups).map((s) => [s.actor, s.groups]);
    expect(noted).toEqual([
      ['bulk store (from store)', { agent: 'store', kind: 'bulk.store', before: 1, after: 0, waitN: 0, wait: 'wakes' }],
      ['store', { agent: 'store', kind: 'bulk.store', before: 0, after: 0, waitN: 0, wait: 'passes' }],
    ]);
    expect(text).toContain("pending bulk-store groups of store: 1 → 0 (≤ 0: store's wait_group 0 can pass now)");
    expect(text).toContain('pending bulk-store groups of store: 0 (≤ 0: wait_group 0 passes)');
  });
});

describe('pendingAsyncGroups agrees with the machine', () => {
  // Random schedules through kernels with wait_groups: wherever an agent rests at a wait_group,
  // the machine lets it proceed exactly when at most N committed groups are pending.
  const kernels: [string, Program][] = [
    ['groups', sketch(GROUPS)],
    // Groups of both kinds in flight at once: each wait counts its own kind only.
    ['mixed', sketch(MIXED)],
    ['B15', fromFile('examples/bugs/B15.mbk')],
    ['B12', fromFile('examples/bugs/B12.mbk')],
    ['hopper', instantiate(EXAMPLES.find((e) => e.name === 'hopper')!.build(), { S: 2, K: 4 })],
  ];
  for (const [name, prog] of kernels) {
    test(name, () => {
      const m = new Machine(prog);
      let seed = 12345;
      const rand = (n: number) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return (seed >>> 16) % n;
      };
      let checked = 0;
      let blocked = 0;
      const probe = (s: MachineState) => {
        for (let a = 0; a < s.agents.length; a++) {
          if (s.agents[a]!.status !== 'run') continue;
          const ins = m.nextOp(s, a);
          if (!ins || (ins.op.op !== 'wgmma.wait_group' && ins.op.op !== 'cp.async.bulk.wait_group')) continue;
          const kind = ins.op.op === 'wgmma.wait_group' ? 'wgmma' : 'bulk.store';
          const lead = kind === 'wgmma' ? m.program.agents[a]!.wgLeader : a;
          const pass = pendingAsyncGroups(s, a, kind, lead) <= ins.ints.n!(s.agents[a]!.frame);
          expect(m.agentEnabled(s, a)).toBe(pass);
          checked++;
          if (!pass) blocked++;
        }
      };
      for (let run = 0; run < 200; run++) {
        let s = m.initial();
        for (let k = 0; k < 2000 && !m.finished(s); k++) {
          probe(s);
          const en = m.enabled(s);
          if (!en.length) break;
          s = m.step(s, en[rand(en.length)]!).state;
        }
      }
      // Both outcomes were seen.
      expect(blocked).toBeGreaterThan(0);
      expect(checked).toBeGreaterThan(blocked);
    });
  }
});
