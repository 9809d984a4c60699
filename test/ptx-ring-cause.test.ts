// nvcc's copies of an unrolled loop body (the leftover trips) hold copies of its arrives that never
// run with some trip counts: not an `unreachable-arrive` while an arrive of the same CUDA line on
// the same barrier array runs, and never the cause named for a hang they do not explain (a
// producer's start parity: `start-parity`). Fixtures: a user trial's ring.cu, built as ring.ptx and (-DPRODUCER_START_PARITY=0) ring_ppar.ptx.
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => out.push(s), color: false });
  return { code, out: out.join('') };
}

describe('nvcc ring: unrolled copies of an arrive and the cause of a hang', () => {
  for (const n of [4, 5]) {
    it(`the correct ring (param_2=${n}): OK, no unreachable-arrive`, async () => {
      const r = await cli(['check', 'test/fixtures/ptx/ring.ptx', '--block', '64', '--param', `param_2=${n}`]);
      expect(r.out).toContain('verdict: OK');
      expect(r.out).not.toContain('unreachable-arrive');
      expect(r.code).toBe(0);
    });
    it(`the producer's wrong start parity (param_2=${n}): the cause is the parity, not an unreachable arrive`, async () => {
      const r = await cli(['check', 'test/fixtures/ptx/ring_ppar.ptx', '--block', '64', '--param', `param_2=${n}`]);
      expect(r.out).toContain('verdict: HANG');
      expect(r.out).not.toContain('unreachable-arrive');
      expect(r.out).toMatch(/cause \(start-parity at line 326 \(ring\.cu:\d+[^)]*\)\): ring\.w0 waits on empty\[0\] with parity 0 .*uses parity 1/);
      expect(r.code).toBe(1);
    });
  }
});
