/**
 * The phase table over every warp of a role (src/report/phases.ts `phaseRecorder`,
 * `mergePhaseRows`, `renderPhaseTable`): a PTX role is every warp of the block, each its own
 * agent, so the table covers each of them: one row where the warps agree (the header says so),
 * a row per group of warps where they differ.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { mergePhaseRows, phaseTable, renderPhaseTable, warpLabel, type PhaseRow } from '../src/report/phases.js';
import { phaseRows } from '../src/web/phase-rows.js';
import * as M from '../src/index.js';

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const PTX = join(__dirname, 'fixtures', 'ptx', 'tma_pipeline.ptx');

/** tma_pipeline.ptx at its sidecar's launch: 128 threads (warp 0 produces, warps 1-3 consume), 4 tiles. */
function tmaPipeline() {
  const r = parsePtx(readFileSync(PTX, 'utf8'), 'tma_pipeline.ptx');
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, { kernel: 'tma_pipeline', block: 128, params: { param_2: 4 }, tensorMaps: { param_0: 16384 } }).kernel);
}

/** iteration, stage, parity waited on, parity after, variable: a row's values. */
const values = (r: PhaseRow) => [r.iteration, r.stage, r.parityWaited, r.parityAfter, r.phaseVar];

describe('a PTX role: every warp of it', () => {
  test('the consumers w1-w3 each have their own rows on full, equal; the producer w0 has none', () => {
    const p = tmaPipeline();
    const rows = phaseTable(p, 'tma_pipeline', 'full', '%r3');
    expect(new Set(rows.map((r) => r.agent))).toEqual(new Set(['tma_pipeline.w1', 'tma_pipeline.w2', 'tma_pipeline.w3']));
    // `(t / STAGES) & 1` for t = 0..3 on full[t % 2]; the register holds the parity waited on.
    const expected = [[0, 0, 0, 1, 0], [1, 1, 0, 1, 0], [2, 0, 1, 0, 1], [3, 1, 1, 0, 1]];
    expect(rows.filter((r) => r.agent === 'tma_pipeline.w1').map(values)).toEqual(expected);
    expect(rows.filter((r) => r.agent === 'tma_pipeline.w2').map(values)).toEqual(expected);
    const m = mergePhaseRows(rows, p.agents.map((a) => a.name));
    expect(m.agree).toBe(true);
    expect(m.warps).toEqual(['tma_pipeline.w1', 'tma_pipeline.w2', 'tma_pipeline.w3']);
    expect(m.lines.map((l) => [...values(l), l.warp, l.warps.length])).toEqual(expected.map((e) => [...e, 'all', 3]));
    // The explorer's rows are the same lines.
    expect(phaseRows(p, 'tma_pipeline', 'full', '%r3').map((l) => [...values(l), l.warp])).toEqual(expected.map((e) => [...e, 'all']));
  });

  test('mbsim run --phase-table: one row per iteration, the header says the warps agree and which passed no such wait', async () => {
    const r = await cli(['run', PTX, '--phase-table', 'tma_pipeline:full:%r3']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const table = r.out.split('phase tracking\n')[1]!.split('\n\n')[0];
    expect(table).toBe([
      'all 3 warps with these waits agree (tma_pipeline.w1–w3): each row stands for every one of them; tma_pipeline.w0 passed no such wait',
      'iteration  stage  phase parity waited on  barrier parity after completion  %r3 after iteration',
      '0          0      0                       1                                0',
      '1          1      0                       1                                0',
      '2          0      1                       0                                1',
      '3          1      1                       0                                1',
    ].join('\n'));
    // --json: every warp's rows, named.
    const j = await cli(['run', PTX, '--phase-table', 'tma_pipeline:full:%r3', '--json', '--omit', 'events,spans,ledger']);
    const doc = JSON.parse(j.out) as { phaseTable: PhaseRow[] };
    expect(doc.phaseTable.length).toBe(12);
    expect(doc.phaseTable.filter((x) => x.agent === 'tma_pipeline.w3').map(values)).toEqual([[0, 0, 0, 1, 0], [1, 1, 0, 1, 0], [2, 0, 1, 0, 1], [3, 1, 1, 0, 1]]);
  }, 60_000);

  test('a barrier only one warp waits on: its rows, and the header says the others passed none', async () => {
    const r = await cli(['run', PTX, '--phase-table', 'tma_pipeline:empty:%r9']);
    expect(r.code).toBe(0);
    expect(r.out.split('phase tracking\n')[1]!.split('\n\n')[0]).toBe([
      "only tma_pipeline.w0 of the role's 4 warps passed these waits",
      'iteration  stage  phase parity waited on  barrier parity after completion  %r9 after iteration',
      '0          0      0                       1                                0',
      '1          1      0                       1                                0',
    ].join('\n'));
  }, 60_000);
});

describe('warps that differ', () => {
  test("a row per group of warps where they differ, 'all' where they agree", () => {
    const row = (agent: string, iteration: number, stage: number, parity: number): PhaseRow =>
      ({ agent, iteration, stage, parityWaited: parity, parityAfter: parity ^ 1, phaseVar: parity, phase: 1 });
    const rows = [row('c.w0', 0, 0, 0), row('c.w1', 0, 0, 0), row('c.w0', 1, 1, 0), row('c.w1', 1, 0, 1)];
    const m = mergePhaseRows(rows, ['c.w0', 'c.w1']);
    expect(m.agree).toBe(false);
    expect(m.lines.map((l) => [l.iteration, l.warp, l.stage, l.parityWaited])).toEqual([[0, 'all', 0, 0], [1, 'c.w0', 1, 0], [1, 'c.w1', 0, 1]]);
    expect(renderPhaseTable(rows, 'ph', { warps: ['c.w0', 'c.w1'] })).toBe([
      "the warps differ (c.w0–w1): per iteration a row per group of warps with the same values, marked 'all' where every warp agrees",
      'iteration  warp  stage  phase parity waited on  barrier parity after completion  ph after iteration',
      '0          all   0      0                       1                                0',
      '1          c.w0  1      0                       1                                0',
      '1          c.w1  0      1                       0                                1',
    ].join('\n'));
  });

  test('CUTLASS pingpong: the two math warpgroups wait on their own order barriers; each group of 4 warps is one row', () => {
    const p = M.instantiate(M.parseSketch(readFileSync('examples/cutlass-pingpong.mbk', 'utf8'), 'cutlass-pingpong.mbk').kernel!);
    const m = mergePhaseRows(M.phaseTable(p, 'math', 'order', 'ph'), p.agents.map((a) => a.name));
    expect(m.agree).toBe(false);
    expect(m.lines.slice(0, 4).map((l) => [l.iteration, l.warp, l.stage, l.parityWaited, l.phaseVar])).toEqual([
      [0, 'math[0].w0–w3', 0, 1, 1], [0, 'math[1].w0–w3', 1, 0, 0], [1, 'math[0].w0–w3', 2, 1, 1], [1, 'math[1].w0–w3', 3, 0, 0],
    ]);
  });

  test('warpLabel: runs of one instance as a range, other names as they are', () => {
    expect(warpLabel(['k.w1', 'k.w2', 'k.w3', 'k.w5', 'p'])).toBe('k.w1–w3, k.w5, p');
  });
});
