// A GEMM epilogue's shared-memory traffic as nvcc writes it (kernels of the test's own): the warp
// writes its accumulators into a staging tile with `stmatrix` (a store through each lane's row
// address: `.x2` uses lanes 0-15), then the first lanes each issue a TMA store of their own
// column block (`if (threadIdx.x < 2)`: two lanes, two sources) and wait for the reads before the
// tile is written again. stmatrix is a shared-memory store (src/ptxi/insn.ts), and a bulk store
// by 2 to 31 lanes is one store per active lane with that lane's operands.
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

/**
 * One warp; `tile` is two 16 KiB blocks (the tensor map's box). Lanes 0 and 1 store block `lane`;
 * then the warp writes block `again` with stmatrix: after `wait_group.read 0` when `wait`.
 */
const kernel = (opts: { wait: boolean; again: 0 | 1; stores?: string }) => [
  '.version 9.0', '.target sm_90a', '.address_size 64',
  '.visible .entry epi(.param .align 64 .b8 epi_param_0[128])', '.reqntid 32, 1, 1', '{',
  '.reg .pred %p<4>;', '.reg .b32 %r<16>;', '.reg .b64 %rd<4>;', '.shared .align 1024 .b8 tile[32768];',
  'mov.b64 %rd1, epi_param_0;', 'cvta.param.u64 %rd2, %rd1;',
  'mov.u32 %r1, %tid.x;', 'mov.u32 %r2, tile;',
  'shl.b32 %r3, %r1, 4;', 'add.s32 %r4, %r2, %r3;', // this lane's row: tile + 16 · lane
  'mov.u32 %r5, 0;', 'mov.u32 %r6, 0;',
  'stmatrix.sync.aligned.x2.m8n8.shared.b16 [%r4], {%r5, %r6};',
  'fence.proxy.async.shared::cta;',
  `setp.gt.u32 %p1, %r1, ${opts.stores ?? '1'};`, '@%p1 bra AFTER;',
  'shl.b32 %r7, %r1, 14;', 'add.s32 %r8, %r2, %r7;', // block `lane` of the tile
  'shl.b32 %r9, %r1, 6;',
  'cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {%r9, %r5}], [%r8];',
  'cp.async.bulk.commit_group;',
  ...(opts.wait ? ['cp.async.bulk.wait_group.read 0;'] : []),
  'AFTER:',
  'bar.warp.sync -1;',
  `add.s32 %r10, %r4, ${opts.again * 16384};`,
  'stmatrix.sync.aligned.x2.m8n8.shared.b16 [%r10], {%r5, %r6};',
  'ret;', '}', '',
].join('\n');

function program(src: string) {
  const r = parsePtx(src, 'epi.ptx');
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, { tensorMaps: { epi_param_0: 16384 } }).kernel);
}

describe('an epilogue: stmatrix into the staging tile, TMA stores by two lanes', () => {
  it('stores, waits for their reads, writes again: runs and checks OK', () => {
    const p = program(kernel({ wait: true, again: 1 }));
    expect(p.buffers.map((b) => `${b.name}[${b.length}]`)).toEqual(['tile[2]']);
    const s = simulate(p);
    expect(s.diagnostics).toEqual([]);
    expect(s.verdict).toBe('ok');
    const c = check(p, { maxStates: 20_000, randomRuns: false });
    expect(c.verdict).toBe('ok');
  });

  it('without the wait, the second stmatrix races with the store of lane 1 (block 1: lane 1 stores its own source)', () => {
    const c = check(program(kernel({ wait: false, again: 1 })), { maxStates: 20_000, randomRuns: false });
    expect(c.verdict).toBe('race');
    expect(c.hazards[0]?.subject?.name).toBe('tile[1]');
  });

  it('... and with lane 0\'s block (block 0)', () => {
    const c = check(program(kernel({ wait: false, again: 0 })), { maxStates: 20_000, randomRuns: false });
    expect(c.verdict).toBe('race');
    expect(c.hazards[0]?.subject?.name).toBe('tile[0]');
  });

  it('stmatrix .x2 records lanes 0-15 only: lane 31\'s row address is not an access', () => {
    // every lane's row is in block 0 except lane 31's (16 · 31 + 16384 · [lane == 31]): with the wait gone and
    // only lane 1 storing block 1, an access by lane 31 would race on tile[1]; .x2 reads lanes 0-15 only
    const src = kernel({ wait: false, again: 0, stores: '1' })
      .replace('add.s32 %r10, %r4, 0;', 'setp.eq.u32 %p2, %r1, 31;\nselp.u32 %r11, 16384, 0, %p2;\nadd.s32 %r10, %r4, %r11;');
    const c = check(program(src), { maxStates: 20_000, randomRuns: false, all: true } as Parameters<typeof check>[1]);
    expect(c.verdict).toBe('race'); // on tile[0], lane 0's block
    expect(c.hazards.map((h) => h.subject?.name)).not.toContain('tile[1]');
  });
});
