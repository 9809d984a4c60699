import { describe, expect, test } from 'vitest';
import { accessesOf, ASYNC_DEFS, asyncDef, OPC, OPS, opDef, syncClass } from '../src/machine/ops/index.js';
import type { AsyncOp } from '../src/machine/state.js';
import { ISSUE_COST } from '../src/sim/issue-cost.js';

/** The operation table: one module entry per mnemonic, each with a timing entry. */
describe('operation modules', () => {
  test('every op code has exactly its own module entry', () => {
    const names = Object.keys(OPC);
    expect(OPS.length).toBe(names.length);
    for (const n of names) expect(OPS[OPC[n as keyof typeof OPC]]!.op).toBe(n);
  });
  test('every operation has an issue cost under its timing key', () => {
    const missing = OPS.filter((d) => typeof ISSUE_COST[d.timing] !== 'function').map((d) => d.op);
    expect(missing).toEqual([]);
  });
  test('families and happens-before classes', () => {
    expect(opDef('mbarrier.wait').family).toBe('mbarrier');
    expect(opDef('cp.async.bulk.store').family).toBe('bulk');
    expect(syncClass('mbarrier.wait')).toBe('acquire');
    expect(syncClass('wgmma.wait_group')).toBe('group-wait');
    expect(syncClass('bar.sync')).toBe('barrier');
    expect(syncClass('tcgen05.commit')).toBe('release');
    expect(opDef('st.shared').access).toBe('w');
    expect(opDef('tcgen05.ld').access).toBe('r');
    expect(opDef('cp.async.bulk').access).toBeUndefined();
  });
  test('the accesses of asynchronous operations: copies write, stores read, MMAs read their operands', () => {
    const o = (kind: AsyncOp['kind'], buf: number, reads: number[] | null = null) => ({ kind, buf, reads }) as AsyncOp;
    expect(accessesOf(o('tma', 3))).toEqual([{ buf: 3, rw: 'w' }]);
    expect(accessesOf(o('cp.async', 2))).toEqual([{ buf: 2, rw: 'w' }]);
    expect(accessesOf(o('bulk.store', 1))).toEqual([{ buf: 1, rw: 'r' }]);
    expect(accessesOf(o('tc.mma', 4, [5, 6]))).toEqual([{ buf: 4, rw: 'w' }, { buf: 5, rw: 'r' }, { buf: 6, rw: 'r' }]);
    expect(accessesOf(o('wgmma', -1, [7]))).toEqual([{ buf: 7, rw: 'r' }]);
    expect(accessesOf(o('tc.commit', -1))).toEqual([]);
    expect(asyncDef('cp.async').bufAccess).toEqual({ rw: 'w', proxy: 'generic' });
    expect(ASYNC_DEFS.map((d) => d.kind).sort()).toEqual(['bulk.store', 'clc', 'cp.async', 'cpa.arrive', 'dsmem', 'pick', 'remote', 'st.async', 'tc.commit', 'tc.cp', 'tc.ld', 'tc.mma', 'tc.shift', 'tc.st', 'tma', 'wgmma']);
    expect(accessesOf(o('tc.cp', 4, [5]))).toEqual([{ buf: 4, rw: 'w' }, { buf: 5, rw: 'r' }]);
    expect(accessesOf(o('tc.ld', 4))).toEqual([{ buf: 4, rw: 'r' }]);
    expect(accessesOf(o('tc.st', 4))).toEqual([{ buf: 4, rw: 'w' }]);
  });
});
