/**
 * `per=` on an operation: it overrides the role's default (also in a `per=one` role), and inside
 * an `elect:` block, whose body is one thread's, `per=thread` / `per=warp` is rejected.
 */
import { describe, expect, test } from 'vitest';
import { kernel } from '../src/kernel/builder.js';
import { formatDiagnostic, parseSketch } from '../src/lang/index.js';
import { instantiate, KernelError } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';

function errors(src: string): string {
  const r = parseSketch(src, 't.mbk');
  return r.diagnostics.map((d) => formatDiagnostic(d, src)).join('\n');
}

/** Arrivals on barrier b over the run (its count is never reached; nobody waits). */
function arrivals(src: string): number {
  const r = parseSketch(src, 't.mbk');
  if (!r.kernel) throw new Error(errors(src));
  const sim = simulate(instantiate(r.kernel));
  const arrives = (sim.events ?? []).filter((e) => e.e === 'arrive');
  return arrives.reduce((n, e) => n + ((e as { count?: number }).count ?? 1), 0);
}

describe('per= on an operation', () => {
  test('overrides a per=one role: per=thread is 32 arrivals of a 1-warp role, per=warp one per warp', () => {
    const head = 'kernel k arch=sm_90a\nbarrier b count=1024\n';
    expect(arrivals(`${head}role p warps=1 per=one:\n    mbarrier.arrive b per=thread\n`)).toBe(32);
    expect(arrivals(`${head}role p warps=2 per=one:\n    mbarrier.arrive b per=thread\n`)).toBe(64);
    expect(arrivals(`${head}role p warps=4 per=one:\n    mbarrier.arrive b per=warp\n`)).toBe(4);
    expect(arrivals(`${head}role p warps=4 per=one:\n    mbarrier.arrive b\n`)).toBe(1);
    // A role of one thread: per=thread and per=warp are that thread.
    expect(arrivals(`${head}role p threads=1:\n    mbarrier.arrive b per=thread\n    mbarrier.arrive b per=warp\n`)).toBe(2);
  });

  test('inside elect: per=thread / per=warp is an error with file:line:col and caret', () => {
    const src = 'kernel k arch=sm_90a\nbarrier b count=32\nrole p warps=4:\n    elect:\n        mbarrier.arrive b per=thread\n        mbarrier.arrive b per=warp\n        mbarrier.arrive b per=one\n';
    expect(errors(src)).toBe([
      "t.mbk:5:31: error[E-option-value]: per=thread inside elect: only the elected thread runs this block, so mbarrier.arrive here is one thread's",
      '          mbarrier.arrive b per=thread',
      '                                ^~~~~~',
      'hint: move it out of the elect: block for every thread of each warp to perform it, or drop per=',
      "t.mbk:6:31: error[E-option-value]: per=warp inside elect: only the elected thread runs this block, so mbarrier.arrive here is one thread's",
      '          mbarrier.arrive b per=warp',
      '                                ^~~~',
      'hint: move it out of the elect: block for one thread of each warp to perform it, or drop per=',
    ].join('\n'));
  });

  test('the TypeScript builder gets the same rule when the kernel is instantiated', () => {
    const k = kernel('k', {});
    k.barriers('b', 1, { count: 32 });
    k.role('p', { warps: 1 }, (r) => r.elect((r) => r.arrive('b[0]', { per: 'thread' })));
    expect(() => instantiate(k.build())).toThrow(KernelError);
    expect(() => instantiate(k.build())).toThrow(/per=thread inside elect/);
  });
});
