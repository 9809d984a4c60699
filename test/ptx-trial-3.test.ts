// A third trial of the PTX front end with kernels of the project's own (test/fixtures/ptx/trial,
// built by its build.sh with nvcc 13 at -O3 -lineinfo). The committed PTX is read; nvcc never runs here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import type { PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';
import { TRIAL_DIR, trialProgram } from './support/ptx-trial.js';

const DIR = TRIAL_DIR;
const program = trialProgram;
const verdict = (f: string, launch: PtxLaunch) => {
  const r = check(program(f, launch), { maxStates: 50_000, randomRuns: false }); // no random runs: their start depends on the clock
  return { v: r.verdict, complete: r.complete, kind: r.hazards[0]?.kind, subject: r.hazards[0]?.subject?.name };
};

describe('persist3.cu: persistent tile loop over a 3-stage ring (stage = it % 3, phase = it / 3)', () => {
  const L: PtxLaunch = {
    params: { param_3: 2, param_4: 1, param_5: 2 },
    tensorMaps: { param_0: 8192, param_1: 8192 },
    dynamicSmem: 49152,
  };
  it('models mul.hi.s32 (nvcc\'s division by 3): the stage index is known, the kernel checks OK', () => {
    const text = readFileSync(`${DIR}/persist3.ptx`, 'utf8');
    expect(text).toMatch(/mul\.hi\.s32\s+%r\d+, %r\d+, 1431655766;/);
    expect(simulate(program('persist3.ptx', L)).verdict).toBe('ok');
    expect(verdict('persist3.ptx', L)).toMatchObject({ v: 'ok', complete: true });
  }, 60_000);
  it('finds the planted bugs: parity 1 first (race), one operand\'s bytes (tx-mismatch), half the empty count (race)', () => {
    expect(verdict('planted/persist3.bug1.ptx', L)).toMatchObject({ v: 'race' });
    expect(verdict('planted/persist3.bug2.ptx', L)).toMatchObject({ v: 'tx-mismatch', subject: 'full[0]' });
    const bug3 = check(program('planted/persist3.bug3.ptx', L), { maxStates: 50_000, randomRuns: false });
    expect(bug3.verdict).toBe('race'); // the refill overwrites a stage the other consumers still read (a hang follows in longer schedules)
    // 4 warps release each stage once per use; the producer's last release of each stage goes unwaited
    const count = bug3.warnings.find((w) => w.kind === 'count-mismatch')!;
    expect(count.message).toMatch(/^empty\[0\] expects 2 arrival\(s\) per phase, but 4 agents arrive on it .* the count should be 4$/);
  }, 120_000);
});
