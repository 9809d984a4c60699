import { describe, expect, test } from 'vitest';
import { check, type CheckResult } from '../src/check/index.js';
import { kernel, parseBufRef } from '../src/kernel/builder.js';
import type { Kernel } from '../src/kernel/ir.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate, KernelError, type Program } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';

/** Parses a sketch that must have no diagnostics. */
function sketch(src: string): Kernel {
  const r = parseSketch(src, 't.mbk');
  expect(r.diagnostics).toEqual([]);
  return r.kernel!;
}

function checkOf(src: string, params: Record<string, number> = {}): CheckResult {
  return check(instantiate(sketch(src), params), { timeout: 30_000 });
}

const races = (r: CheckResult) => r.hazards.filter((h) => h.kind === 'race').map((h) => h.subject?.name);

/** Two roles writing through `a` and `b` (buffer references with their byte counts). */
const twoWriters = (decls: string, a: string, b: string) => `kernel t
${decls}
role x warps=1:
    st.shared ${a}
role y warps=1:
    st.shared ${b}
`;

describe('byte ranges of one buffer', () => {
  test('disjoint halves written by two roles do not race', () => {
    const r = checkOf(twoWriters('smem A bytes=8192', 'A, 4096', 'A + 4096, 4096'));
    expect(r.verdict).toBe('ok');
    expect(r.hazards).toEqual([]);
  });

  test('overlapping ranges race, and the report names both ranges', () => {
    const r = checkOf(twoWriters('smem A bytes=8192', 'A, 4096', 'A + 2048, 4096'));
    expect(r.verdict).toBe('race');
    expect(races(r)).toEqual(['A[0:4096]']);
    expect(r.hazards[0]!.message).toContain('A[2048:6144], whose bytes overlap it');
  });

  test('ranges that touch at one byte boundary are disjoint; one byte more overlaps', () => {
    expect(checkOf(twoWriters('smem A bytes=64', 'A + 16, 16', 'A + 32, 32')).verdict).toBe('ok');
    expect(checkOf(twoWriters('smem A bytes=64', 'A + 16, 17', 'A + 32, 32')).verdict).toBe('race');
  });

  test('a whole-element access conflicts with every range of its element, not with other elements', () => {
    expect(checkOf(twoWriters('smem A[2] bytes=8192', 'A[0]', 'A[0] + 4096, 16')).verdict).toBe('race');
    expect(checkOf(twoWriters('smem A[2] bytes=8192', 'A[1]', 'A[0] + 4096, 16')).verdict).toBe('ok');
  });

  test('per-warp offsets: each warp of a role writes its own quarter', () => {
    const src = `kernel t
smem A bytes=4096
role w warps=4:
    st.shared A + warp * 1024, 1024
role r warps=1:
    ld.shared A + 3072, 1024
`;
    const p = instantiate(sketch(src));
    // Four views, one per warp (the reader's range is warp 3's).
    expect(p.bufferSpace.views.map((v) => [v.off, v.len])).toEqual([[0, 1024], [1024, 1024], [2048, 1024], [3072, 1024]]);
    const r = check(p, { timeout: 30_000 });
    expect(races(r)).toEqual(['A[3072:4096]']);
  });
});

describe('ranges fixed before the run', () => {
  const loop = (body: string) => `kernel t
smem A bytes=4096
role x warps=1:
${body}
role y warps=1:
    ld.shared A + 3072, 1024
`;
  test('offsets over a loop variable with constant bounds: one view per trip', () => {
    const p = instantiate(sketch(loop('    for i in range(0, 2):\n        st.shared A + i * 1024, 1024')));
    expect(p.bufferSpace.views.map((v) => v.off)).toEqual([0, 1024, 3072]);
    expect(check(p, { timeout: 30_000 }).verdict).toBe('ok');
    expect(checkOf(loop('    for i in range(0, 4):\n        st.shared A + i * 1024, 1024')).verdict).toBe('race');
  });
  test('an offset the enumeration cannot fix (a local variable) counts as the whole element', () => {
    const r = checkOf(loop('    o = 1024\n    st.shared A + o, 1024'));
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toMatch(/writes A \(st\.shared A \+ o, 1024\)|writes A,/);
  });
});

describe('aliases: one allocation under two names', () => {
  const decls = 'smem A[2] bytes=8192\nsmem B[4] bytes=4096 alias=A';
  test('B[1] is the second half of A[0]: they race', () => {
    const r = checkOf(twoWriters(decls, 'A[0]', 'B[1]'));
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toMatch(/B\[1\], whose bytes overlap it|A\[0\], whose bytes overlap it/);
  });
  test('B[2] is the first half of A[1]: no race with A[0]', () => {
    expect(checkOf(twoWriters(decls, 'A[0]', 'B[2]')).verdict).toBe('ok');
  });
  test('the alias resolves to (allocation, offset, bytes) of its target', () => {
    const p = instantiate(sketch(twoWriters(decls, 'A[0]', 'B[3] + 16, 32')));
    const key = (name: string) => Array.from({ length: p.buffersPerCta }, (_, k) => k).find((k) => p.bufferName(k) === name)!;
    expect(p.bufferRange(key('A[1]'))).toEqual({ alloc: key('A[0]'), offset: 8192, bytes: 8192 });
    expect(p.bufferRange(key('B[3]'))).toEqual({ alloc: key('A[0]'), offset: 12288, bytes: 4096 });
    expect(p.bufferRange(key('B[3][16:48]'))).toEqual({ alloc: key('A[0]'), offset: 12304, bytes: 32 });
    expect(p.buffersOverlap(key('B[3][16:48]'), key('A[1]'))).toBe(true);
    expect(p.buffersOverlap(key('B[3][16:48]'), key('B[2]'))).toBe(false);
  });
  test('an alias has no storage of its own; one that does not fit is an error', () => {
    expect(() => instantiate(kernel('t').smem('A', 2, 100_000).smem('B', 1, 200_000, { alias: 'A' }).role('r', {}, (r) => r.write('B[0]')).build())).not.toThrow();
    expect(() => instantiate(kernel('t').smem('A', 2, 4096).smem('B', 3, 4096, { alias: 'A' }).role('r', {}, (r) => r.write('B[0]')).build()))
      .toThrow(/ends at byte 12288, past the 8192 bytes of A/);
    expect(() => instantiate(kernel('t').smem('A', 2, 4096).smem('B', 1, 4096, { alias: 'A[1]' }).role('r', {}, (r) => r.write('B[0]')).build())).not.toThrow();
  });
});

describe('a TMA box at an offset', () => {
  const src = (read: string) => `kernel t arch=sm_90a
smem S bytes=8192
barrier full count=1
role producer warps=1 per=one:
    mbarrier.arrive.expect_tx full, 4096
    cp.async.bulk.tensor S + 4096, 4096, full
role consumer warps=1:
    mbarrier.try_wait.parity full, 0
role reader warps=1:
    ld.shared ${read}
`;
  test('its bytes land at the offset: the access is (allocation, 4096, 4096)', () => {
    const p = instantiate(sketch(src('S, 16')));
    const sim = simulate(p);
    const acc = sim.events!.filter((e) => e.e === 'access' && e.proxy === 'async');
    expect(acc.length).toBeGreaterThan(0);
    for (const e of acc) {
      if (e.e !== 'access') continue;
      expect(p.bufferName(e.buf)).toBe('S[4096:8192]');
      expect(p.bufferRange(e.buf)).toEqual({ alloc: 0, offset: 4096, bytes: 4096 });
    }
  });
  test('a reader of the lower half does not race with the copy; a reader of its bytes does', () => {
    expect(checkOf(src('S, 4096')).verdict).toBe('ok');
    const r = checkOf(src('S + 6000, 16'));
    expect(r.verdict).toBe('race');
    // The subject is the lower of the two keys (the copy's range, enumerated first), whichever access came first.
    expect(races(r)[0]).toBe('S[4096:8192]');
    expect(r.hazards[0]!.message).toMatch(/S\[6000:6016\]/);
  });
});

describe('buffers placed in one CTA (cta=N)', () => {
  const src = (ref: string) => `kernel t cluster=2
smem A bytes=4096 cta=0
role r warps=1 cta=1:
    ld.shared ${ref}
    barrier.cluster.arrive
    barrier.cluster.wait
role keeper warps=1 cta=0:
    barrier.cluster.arrive
    barrier.cluster.wait
`;
  test('a role that runs only in another CTA naming it without @CTA: E-index-range with the fix', () => {
    const d = parseSketch(src('A'), 't.mbk').diagnostics;
    expect(d.map((x) => `${x.line}:${x.col} ${x.code}: ${x.message} (${x.hint})`))
      .toEqual(['4:15 E-index-range: A exists only in CTA 0 (declared cta=0), and role r runs in CTA 1 (reach it through distributed shared memory: A@0)']);
  });
  test('another CTA reaching it without @CTA at run time is an error naming the fix', () => {
    const k = kernel('t', { cluster: 2 }).smem('A', 1, 4096, { cta: 0 }).role('r', {}, (r) => r.if('cta == 1', (r) => r.read('A[0]'))).build();
    const sim = simulate(instantiate(k));
    expect(sim.diagnostics.map((d) => d.diag.code)).toEqual(['index-range']);
    expect(sim.diagnostics[0]!.diag.message).toContain('A exists only in CTA 0 (declared cta=0); CTA 1 reaches it only through distributed shared memory: write A[0]@0');
  });
  test('through distributed shared memory (@0) it is fine', () => {
    const p = instantiate(sketch(src('A@0')));
    expect(simulate(p).diagnostics).toEqual([]);
    expect(check(p, { timeout: 30_000 }).verdict).toBe('ok');
  });
  test('its bytes count in its CTA only', () => {
    // 2 × 120 KiB would exceed 227 KiB in one CTA; one in each CTA does not.
    const k = (c1: number) => kernel('t', { cluster: 2 }).smem('A', 1, 120 * 1024, { cta: 0 }).smem('B', 1, 120 * 1024, { cta: c1 }).role('r', {}, (r) => r.read('A[0]@0')).build();
    expect(() => instantiate(k(1))).not.toThrow();
    expect(() => instantiate(k(0))).toThrow(KernelError);
  });
});

describe('sketch diagnostics of ranges and aliases', () => {
  const diags = (src: string) => parseSketch(src, 't.mbk').diagnostics.map((d) => `${d.line}:${d.col}-${d.endCol} ${d.code}: ${d.message}`);
  test('an offset outside the element: E-buffer-range at the offset', () => {
    expect(diags('kernel t\nsmem A[2] bytes=8192\nrole r warps=1:\n    st.shared A[1] + 8192\n'))
      .toEqual(['4:22-26 E-buffer-range: byte offset 8192 is outside A[1], which has 8192 bytes']);
  });
  test('offset + bytes past the end of the element', () => {
    expect(diags('kernel t arch=sm_90a\nsmem A bytes=8192\nbarrier b count=1\nrole r warps=1 per=one:\n    cp.async.bulk.tensor A + 4096, 8192, b\n'))
      .toEqual(['5:30-34 E-buffer-range: bytes 4096 to 12287 (offset 4096, 8192 bytes) run past the end of A[0], which has 8192 bytes']);
  });
  test('bad aliases', () => {
    expect(diags('kernel t\nsmem A[2] bytes=64\nsmem B[3] bytes=64 alias=A\nrole r warps=1:\n    st.shared B[0]\n'))
      .toEqual(['3:26-27 E-alias: B (3 × 64 bytes from A[0]) ends at byte 192, past the 128 bytes of A']);
    expect(diags('kernel t\nsmem B bytes=64 alias=Q\nrole r warps=1:\n    st.shared B\n')[0]).toMatch(/^2:23-24 E-alias: alias=Q: 'Q' is not a buffer array/);
  });
  test('the operation text shows the offset', () => {
    const p = instantiate(sketch(twoWriters('smem A bytes=8192', 'A + 16 * 4, 32', 'A')));
    const texts = p.roles.flatMap((r) => r.code).filter((i) => i.i === 'op').map((i) => (i as { text: string }).text);
    expect(texts).toContain('st.shared A + 16 * 4, 32');
  });
});

describe('the builder', () => {
  test('parseBufRef reads BUF + OFF, also with @CTA', () => {
    expect(parseBufRef('A[s] + 4096')).toEqual({ name: 'A', index: { k: 'var', name: 's' }, offset: { k: 'num', v: 4096 } });
    expect(parseBufRef('A[i + 1]@(1 - cta) + T')).toMatchObject({ name: 'A', offset: { k: 'var', name: 'T' }, cta: { k: 'bin', op: '-' } });
    expect(parseBufRef('A[2]')).toEqual({ name: 'A', index: { k: 'num', v: 2 } });
  });
  test('ranged TMA boxes and writes from the builder check like the sketch', () => {
    const k = kernel('t', { arch: 'sm_90a' }).smem('S', 1, 8192).barrier('full', { count: 1 })
      .role('p', { per: 'one' }, (r) => r.arriveExpectTx('full', 8192).tma('S[0]', 4096, 'full').tma('S[0] + 4096', 4096, 'full'))
      .role('q', {}, (r) => r.write('S[0] + 4096', 16))
      .build();
    const p: Program = instantiate(k);
    // --all: q never waits, so the CTA's exit with the copies in flight is found at a smaller depth.
    const r = check(p, { timeout: 30_000, all: true });
    expect(races(r)).toEqual(['S[0][4096:8192]']);
    expect(r.hazards[0]!.message).toContain('S[0][4096:4112]');
  });
});
