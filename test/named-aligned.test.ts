import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';

/**
 * Aligned and non-aligned named barriers (PTX ISA §9.7.13.1): `bar.sync` is `barrier.sync.aligned`,
 * every thread of which executes the same instruction; `barrier.sync` may be reached from
 * different instructions. Two aligned sites of one role in one generation are `aligned-barrier`.
 */
const program = (body: string, warps = 2) => {
  const parsed = parseSketch(`kernel k arch=sm_90a\nsmem S bytes=256\nrole r warps=${warps}:\n${body}`, 't.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return instantiate(parsed.kernel!);
};
const diverge = (sync: string) => `    if warp == 0:\n        st.shared S\n        ${sync} 1, 64\n    else:\n        ${sync} 1, 64\n        ld.shared S\n`;
const codes = (p: ReturnType<typeof program>) => simulate(p).diagnostics.map((d) => d.diag.code);

describe('aligned named barriers', () => {
  test('two bar.sync lines of one role meeting in one generation: aligned-barrier, naming both lines', () => {
    const p = program(diverge('bar.sync'));
    const d = simulate(p).diagnostics.filter((x) => x.diag.code === 'aligned-barrier');
    expect(d.length).toBe(1);
    expect(d[0]!.diag.severity).toBe('error');
    expect(d[0]!.diag.message).toMatch(/^r\.w\d reaches named barrier 1 through bar\.sync 1, 64 at line (6|8) while other threads of role r are in the same generation through line (6|8) \(bar\.sync 1, 64\)/);
    expect(d[0]!.loc!.line === 6 || d[0]!.loc!.line === 8).toBe(true);
    expect(check(p, { all: true }).verdict).toBe('aligned-barrier');
  });
  test('barrier.sync (not aligned), barrier.sync.aligned written out, and one site in a loop', () => {
    expect(codes(program(diverge('barrier.sync')))).toEqual([]);
    expect(codes(program(diverge('barrier.sync.aligned')))).toEqual(['aligned-barrier']);
    expect(check(program('    for i in range(0, 3):\n        bar.sync 1, 64\n'), { all: true }).verdict).toBe('ok');
  });
  test('bar.arrive and bar.sync on one barrier (the producer / consumer idiom) and different roles are not reported', () => {
    expect(codes(program('    if warp == 0:\n        st.shared S\n        bar.arrive 1, 64\n    else:\n        bar.sync 1, 64\n        ld.shared S\n'))).toEqual([]);
    const two = parseSketch('kernel k arch=sm_90a\nsmem S bytes=256\nrole a warps=1:\n    st.shared S\n    bar.sync 1, 64\nrole b warps=1:\n    bar.sync 1, 64\n    ld.shared S\n', 't.mbk');
    expect(check(instantiate(two.kernel!), { all: true }).verdict).toBe('ok');
  });
});
