import { expect, test } from 'vitest';
import { check } from '../src/check/check.js';
import { checkJson, renderCheck } from '../src/check/report.js';
import { kernel } from '../src/kernel/builder.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';
import { buildLedger } from '../src/report/ledger.js';

/** A barrier or buffer declared without a length is named without `[0]` in every output. */
const SKETCH = `kernel k arch=sm_100a
barrier cdone count=2
barrier ring[1] count=1
smem tile bytes=4096

role producer warps=1 per=one:
    mbarrier.arrive.expect_tx ring[0], 4096
    cp.async.bulk.tensor tile, 4096, ring[0]
    mbarrier.arrive cdone

role consumer warps=1 per=one:
    mbarrier.try_wait.parity ring[0], 0
    ld.shared tile
    mbarrier.try_wait.parity cdone, 0
`;

test('a scalar barrier is `cdone` in the text report, the JSON subject, the trace and the ledger; an array of one stays `ring[0]`', () => {
  const r = parseSketch(SKETCH, 'k.mbk');
  expect(r.diagnostics).toEqual([]);
  const p = instantiate(r.kernel!);
  const res = check(p);
  expect(res.verdict).toBe('hang');
  const h = res.hazards[0]!;
  expect(h.subject).toEqual({ type: 'barrier', name: 'cdone' });
  const json = JSON.stringify(checkJson(res));
  expect(json).not.toMatch(/cdone\[0\]|tile\[0\]/);
  expect(json).toMatch(/ring\[0\]/);
  const text = renderCheck(res);
  expect(text).not.toMatch(/cdone\[0\]|tile\[0\]/);
  expect(text).toMatch(/HANG on barrier cdone/);
  expect(h.trace.map((s) => s.op)).toContain('mbarrier.arrive cdone  [cdone]');
  expect(h.trace.map((s) => s.op)).toContain('cp.async.bulk.tensor tile, 4096, ring[0]  [ring[0], tile, 4096 B]');
  expect(h.trace.flatMap((s) => s.barriers.map((b) => b.name))).toContain('cdone');
  const sim = simulate(p);
  expect(buildLedger(p, sim.events!).phases.map((ph) => ph.barrier)).toEqual(expect.arrayContaining(['ring[0]', 'cdone']));
});

test('the builder declares a scalar barrier with barrier(name, …)', () => {
  const k = kernel('b').barrier('done', { count: 1 }).smem('t', 1, 64);
  k.role('a', { warps: 1, per: 'one' }, (r) => r.arrive('done').wait('done', 0).read('t'));
  const p = instantiate(k.build());
  expect(p.barrierName(0)).toBe('done');
  expect(p.bufferName(0)).toBe('t[0]');
  expect(p.roles[0]!.code.flatMap((i) => (i.i === 'op' ? [i.text] : []))).toEqual(['mbarrier.arrive done', 'mbarrier.try_wait.parity done, 0', 'ld.shared t[0]']);
});
