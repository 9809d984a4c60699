// libcu++'s cuda::barrier::wait_parity as nvcc -O3 writes it (test/fixtures/ptx/src/backoff.cu):
// the try_wait test first, then its backoff (a retry counter, %globaltimer, nanosleep) in blocks
// after the test that jump back to it. The spin loop is a blocking wait (src/ptxi/spin.ts
// `retries`), and the planted twins' hangs name what is missing, not the start parity.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

const launch = { block: 96, params: { param_2: 6 } };
function program(src: string, file: string) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
const read = (f: string) => readFileSync(`test/fixtures/ptx/${f}`, 'utf8');

describe('backoff.cu: a ring whose waits spin with libcu++\'s backoff after the test', () => {
  it('simulates and checks OK: every wait is one blocking wait, no clock value reaches a branch', () => {
    const p = program(read('backoff.ptx'), 'backoff.ptx');
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    // 6 trips: the producer waits on empty for trips 3-5, the two consumer warps on full for all 6.
    const waits = (s.events ?? []).filter((e) => e.e === 'wait');
    expect(waits.length).toBe(3 + 2 * 6);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('is not a blocking wait when a register the backoff writes is read after the loop', () => {
    // The consumers' backoff computes the elapsed time in %rd2; storing it after the loop makes
    // the backoff's runs visible, so the loop is kept as written and its clock branch is refused.
    const src = read('backoff.ptx').replace(/(\tst\.global\.f32 \t\[%rd14\], %f7;\n)/, '$1\tst.global.u64 \t[%rd14], %rd2;\n');
    expect(src).toContain('[%rd14], %rd2;');
    // A try_wait may fail (it returns false at its time limit): the checker follows the backoff.
    const r = check(program(src, 'backoff-live.ptx'), { maxStates: 100_000 });
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toMatch(/^bra: the value of %p\d+ is not modelled/);
  });

  it('-DBUG=1 (expects half the bytes): a tx mismatch, and the hang does not blame the start parity', () => {
    const r = check(program(read('planted/backoff.bug1.ptx'), 'backoff.bug1.ptx'), { maxStates: 100_000, all: true });
    expect(r.hazards.map((h) => h.kind)).toContain('tx-mismatch');
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.cause?.kind).not.toBe('start-parity');
    expect(hang.details.join('\n')).not.toContain('hint: parity 0');
  });

  it('-DBUG=2 (half the threads release): the hang says 32 of 64 arrivals are missing, no start-parity cause', () => {
    const r = check(program(read('planted/backoff.bug2.ptx'), 'backoff.bug2.ptx'), { maxStates: 100_000 });
    expect(r.verdict).toBe('hang');
    const hang = r.hazards[0]!;
    expect(hang.subject?.name).toBe('empty[0]');
    expect(hang.details.join('\n')).toContain('32 of 64 arrivals are missing');
    expect(hang.cause?.kind).not.toBe('start-parity');
  });
});
