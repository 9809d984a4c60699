// A copy whose byte range is larger than one element of the shared-memory array it lands in (or
// reads) covers every element its bytes overlap (machine/views.ts: shared memory is contiguous,
// PTX ISA §9.7.9.25.5.1 `cp.async.bulk.tensor` writes its box contiguously from the destination
// address; §9.7.9.25.4.1 the bulk copies' `size` bytes). On nvcc's PTX of
// test/fixtures/ptx/src/tma_span.cu (`nvcc -arch=sm_90a -ptx -lineinfo -std=c++17 tma_span.cu`,
// and `-DBUG=1` for planted/tma_span.bug1.ptx; src/build.sh): a 16 KiB box among 8 KiB ones, and a
// 16 KiB bulk store out of an array cut into 8 KiB elements; before this rule both planted races
// checked OK (the copy was recorded on its first element only). And small sketches of the rule.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { main } from '../src/cli/main.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import type { Program } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { trialProgram } from './support/ptx-trial.js';

const TMA: PtxLaunch = { kernel: 'tma_span', block: 64, tensorMaps: { param_0: 16384, param_1: 8192 } };
const STORE: PtxLaunch = { kernel: 'bulk_store_span', block: 32 };

function fixture(file: string, launch: PtxLaunch): Program {
  const r = parsePtx(readFileSync(`test/fixtures/ptx/${file}`, 'utf8'), file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}

function sketch(src: string): Program {
  const k = parseSketch(src, 'span.mbk');
  expect(k.diagnostics).toEqual([]);
  return instantiate(k.kernel!);
}

/** The CTA-local key of `name` in `p` (an element `tile[1]` or a span `tile[0..1]`), by its display name. */
function keyNamed(p: Program, name: string): number {
  for (let k = 0; k < p.buffersPerCta; k++) if (p.bufferName(k) === name) return k;
  throw new Error(`no buffer key named ${name}: ${Array.from({ length: p.buffersPerCta }, (_, k) => p.bufferName(k)).join(', ')}`);
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => out.push(s), color: false });
  return { code, out: out.join('') };
}

describe('tma_span.cu: a 16 KiB box in an array of 8 KiB elements', () => {
  it('the array is three 8 KiB elements; the wide box is the span tile[0..1], which overlaps tile[0] and tile[1], not tile[2]', () => {
    const p = fixture('tma_span.ptx', TMA);
    const tile = p.buffers.find((b) => b.name === 'tile')!;
    expect([tile.length, tile.bytes, tile.ranged, tile.spans]).toEqual([3, 8192, true, true]);
    const span = keyNamed(p, 'tile[0..1]');
    const range = p.bufferRange(span);
    expect([range.offset, range.bytes]).toEqual([0, 16384]);
    expect([0, 1, 2].map((i) => p.buffersOverlap(span, tile.offset + i))).toEqual([true, true, false]);
    // The whole allocation: the key of a span the enumeration could not fix before the run.
    expect(p.bufferRange(keyNamed(p, 'tile[0..2]')).bytes).toBe(24576);
  });

  it('the consumers wait on the full barrier before reading the second half: OK', () => {
    const r = check(fixture('tma_span.ptx', TMA), { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.coverage.states).toBe(8);
  });

  it('-DBUG=1: a read of bytes 8192.. of the wide box before the wait is a race on tile[1] (was OK: the copy wrote tile[0] only)', () => {
    const r = check(fixture('planted/tma_span.bug1.ptx', TMA), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    const h = r.hazards[0]!;
    expect(h.subject?.name).toBe('tile[1]');
    expect(h.message).toContain('reads tile[1] after a TMA copy wrote it');
    expect(h.locations[0]!.line).toBe(90);
    expect(h.locations[0]!.origin).toBe('tma_span.cu:42');
  });

  it('mbsim check: exit 0 for the kernel, 1 for its twin, naming the span', async () => {
    const args = ['--kernel', 'tma_span', '--block', '64', '--tensor-map', 'param_0=16384', '--tensor-map', 'param_1=8192'];
    expect((await cli(['check', 'test/fixtures/ptx/tma_span.ptx', ...args])).code).toBe(0);
    const bad = await cli(['check', 'test/fixtures/ptx/planted/tma_span.bug1.ptx', ...args]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('RACE on buffer tile[1]');
  });
});

describe('tma_span.cu: a 16 KiB bulk store out of an array of 8 KiB elements', () => {
  it('the store reads buf[0..1]; waiting for it (wait_group.read 0) before loading into buf[1]: OK', () => {
    const p = fixture('tma_span.ptx', STORE);
    expect(p.bufferRange(keyNamed(p, 'buf[0..1]')).bytes).toBe(16384);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
  });

  it('-DBUG=1: the load into buf[1] while the store may still read it is a race (was OK: the store read buf[0] only)', () => {
    const r = check(fixture('planted/tma_span.bug1.ptx', STORE), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    const h = r.hazards[0]!;
    expect(h.subject?.name).toBe('buf[1]');
    expect(h.message).toContain('while the bulk store issued by bulk_store_span (line 169) is still reading buf[0..1], whose bytes overlap it');
  });
});

describe('proxy.cu (trial): a 2 KiB bulk store out of a tile of 128-byte elements (one warp\'s st.shared bytes)', () => {
  it('without fence.proxy.async: a missing fence on the whole tile, stage[0..15]; the fix names the last generic write of any of its elements (was stage[0] and the issuer\'s own write)', () => {
    const r = check(trialProgram('planted/proxy.bug1.ptx', { params: { param_1: 2 } }), { maxStates: 100_000, randomRuns: false });
    expect(r.verdict).toBe('missing-fence');
    const h = r.hazards[0]!;
    expect(h.subject?.name).toBe('stage[0..15]');
    expect(h.details[0]).toBe('fix: fence.proxy.async after proxy.w3\'s generic write of stage[15] (line 255), before bar.sync 0 (line 257), the release that lets proxy.w0 issue the async-proxy operation');
  });
});

/** A producer's copy of `bytes` (an expression; `n` is 16384 in a variable) into `dst` of A, 8 KiB elements; a consumer reading A[1] before (`early`) and after its wait. */
const SPAN = (dst: string, early: boolean, length = 2, bytes = '16384') => `kernel span arch=sm_90a
smem A[${length}] bytes=8192
barrier full count=1

role producer warps=1 per=one:
    n = 16384
    mbarrier.arrive.expect_tx full, ${bytes === '8192' ? 8192 : 16384}
    cp.async.bulk.tensor ${dst}, ${bytes}, full

role consumer warps=1 per=one:
${early ? '    ld.shared A[1]\n' : ''}    mbarrier.try_wait.parity full, 0
    ld.shared A[1]
`;

describe('the machine: a range past its element covers the next elements of its allocation', () => {
  it('a copy of two elements into A[0]: a read of A[1] before the wait races with it; after it, OK', () => {
    const bad = check(sketch(SPAN('A[0]', true)));
    expect(bad.verdict).toBe('race');
    expect(bad.hazards[0]!.message).toContain('consumer reads A[1] while the TMA copy issued by producer (line 8) is still writing A[0..1], whose bytes overlap it');
    expect(check(sketch(SPAN('A[0]', false))).verdict).toBe('ok');
  });

  it('a count the enumeration does not know before the run (read from a variable): the copy writes the whole allocation, A[0..2]', () => {
    const p = sketch(SPAN('A[0]', true, 3, 'n'));
    expect(p.buffers[0]!.spans).toBe(true);
    const r = check(p);
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toContain('still writing A[0..2]');
  });

  it('a copy of two elements into the last one runs past the allocation: out of range at the copy, with the bytes it holds', () => {
    const r = check(sketch(SPAN('A[1]', false)));
    expect(r.verdict).toBe('index-range');
    expect(r.hazards[0]!.message).toBe('cp.async.bulk.tensor A[1], 16384, full: bytes 0 to 16383 (offset 0, 16384 bytes) of A[1] run past the end of its shared memory, which holds 8192 bytes from the start of A[1] (0 to 8191)');
    expect(r.hazards[0]!.locations[0]!.line).toBe(8);
  });

  it('a copy within its element keeps the fast path: no span, no overlap table', () => {
    const p = sketch(SPAN('A[0]', false, 2, '8192'));
    expect([p.buffers[0]!.ranged, p.buffers[0]!.spans, p.bufferSpace.overlap]).toEqual([false, undefined, null]);
    expect(check(p).verdict).toBe('ok');
  });
});
