// A PTX access that starts inside an element of its shared-memory array is the bytes it names, not
// its element from the start (ptxi/align.ts, refs.ts `range`; machine/views.ts views): a constant
// offset from the array, or one computed at run time whose alignment the translation proves
// (`offsetStep`). On nvcc's PTX of test/fixtures/ptx/src/tma_offset.cu (`nvcc -arch=sm_90a -ptx
// -lineinfo -std=c++17 tma_offset.cu`, `-DBUG=1` for planted/tma_offset.bug1.ptx; src/build.sh):
// a 16 KiB box landing at byte 8192 of an array of 16 KiB elements, an 8 KiB bulk copy into the
// second half of element 2 + (blockIdx.x & 1), and reads of one address by every thread.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate, type Program } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import type { BufRef, Op, Stmt } from '../src/kernel/ir.js';

const L: PtxLaunch = { kernel: 'tma_offset', block: 64, tensorMaps: { param_0: 16384 } };

function kernelOf(file: string, launch: PtxLaunch = L) {
  const r = parsePtx(readFileSync(`test/fixtures/ptx/${file}`, 'utf8'), file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return translatePtx(r.module, launch).kernel;
}
const fixture = (file: string): Program => instantiate(kernelOf(file));

/** Every operation of the kernel's roles (inside loops and branches too). */
function ops(stmts: Stmt[], out: Op[] = []): Op[] {
  for (const s of stmts) {
    if (s.s === 'op') out.push(s.op);
    else if (s.s === 'if') { ops(s.then, out); if (s.else) ops(s.else, out); }
    else if (s.s === 'for' || s.s === 'elect') ops(s.body, out);
  }
  return out;
}

/** The CTA-local key named `name`, by its display name. */
function keyNamed(p: Program, name: string): number {
  for (let k = 0; k < p.buffersPerCta; k++) if (p.bufferName(k) === name) return k;
  throw new Error(`no buffer key named ${name}: ${Array.from({ length: p.buffersPerCta }, (_, k) => p.bufferName(k)).join(', ')}`);
}

describe('tma_offset.cu: copies and reads inside 16 KiB elements', () => {
  it('the translation carries the offsets: 8192 for the box (a constant), a run-time multiple of 8192 for the bulk copy, the reads\' constants with their 4 bytes', () => {
    const k = kernelOf('tma_offset.ptx');
    expect(k.buffers.map((b) => [b.name, b.length, b.bytes])).toEqual([['tile', { k: 'num', v: 4 }, { k: 'num', v: 16384 }]]);
    const all = k.roles.flatMap((r) => ops(r.body));
    const copies = all.filter((o): o is Extract<Op, { op: 'cp.async.bulk' }> => o.op === 'cp.async.bulk');
    expect(copies.map((c) => [c.tensor, c.dst.offset?.k, c.dst.offsetStep])).toEqual([[true, 'num', undefined], [false, 'var', 8192]]);
    expect(copies[0]!.dst.offset).toEqual({ k: 'num', v: 8192 });
    const reads = all.filter((o): o is Extract<Op, { op: 'ld.shared' }> => o.op === 'ld.shared');
    const off = (r: BufRef) => (r.offset?.k === 'num' ? r.offset.v : 0);
    expect(reads.map((r) => [off(r.buf), r.bytes])).toEqual([[0, { k: 'num', v: 4 }], [0, { k: 'num', v: 4 }], [8192, { k: 'num', v: 4 }], [0, { k: 'num', v: 4 }], [8192, { k: 'num', v: 4 }]]);
  });

  it('the machine sees the true bytes: the box spans tile[0]\'s second half and tile[1]\'s first; the bulk copy tile[2]\'s second half', () => {
    const p = fixture('tma_offset.ptx');
    const box = keyNamed(p, 'tile[0][8192:24576]');
    const bulk = keyNamed(p, 'tile[2][8192:16384]');
    const first0 = keyNamed(p, 'tile[0][0:4]');
    const first1 = keyNamed(p, 'tile[1][0:4]');
    const first2 = keyNamed(p, 'tile[2][0:4]');
    const second2 = keyNamed(p, 'tile[2][8192:8196]');
    expect([p.bufferRange(box).offset, p.bufferRange(box).bytes]).toEqual([8192, 16384]);
    // A copy into the second half does not touch a read of the first half, and does touch one of the second half.
    expect([first0, first1].map((k) => p.buffersOverlap(box, k))).toEqual([false, true]);
    expect([first2, second2].map((k) => p.buffersOverlap(bulk, k))).toEqual([false, true]);
    expect(p.buffersOverlap(box, bulk)).toBe(false);
  });

  it('the clean kernel checks OK: the reads before the waits are of bytes no copy writes', () => {
    const r = check(fixture('tma_offset.ptx'), { maxStates: 200_000, randomRuns: false });
    expect(r.hazards.map((h) => `${h.kind} ${h.subject?.name}`)).toEqual([]);
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('-DBUG=1: the reads of the box\'s second half and the bulk copy\'s bytes before the waits are two races, at their CUDA lines', () => {
    const r = check(fixture('planted/tma_offset.bug1.ptx'), { maxStates: 200_000, randomRuns: false, all: true });
    expect(r.verdict).toBe('race');
    const races = r.hazards.filter((h) => h.kind === 'race');
    // Each copy's bytes against the read of them (the reads of the first halves of tile[0] and tile[2] are no race).
    expect(races.map((h) => h.subject?.name).sort()).toEqual(['tile[0][8192:24576]', 'tile[2][8192:16384]']);
    const lines = races.map((h) => h.trace.at(-1)?.loc?.origin).sort();
    expect(lines).toEqual(['tma_offset.cu:43', 'tma_offset.cu:44']);
  });
});
