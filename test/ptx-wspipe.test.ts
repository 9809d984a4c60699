// A user's warp-specialized pipeline in CCCL's cuda::ptx (test/fixtures/ptx/src/wspipe.cu, built by
// src/build.sh with nvcc 13 at -lineinfo; every file ends with its launch line): warp 0's lane
// elected by cooperative_groups::invoke_one arms full[s] and issues a 1-D cp.async.bulk into one of
// 3 stages, warps 1-2 wait on full[s], read the stage and release it on empty[s]; num_k (param_2) is
// the k-loop's trip count. Its four planted twins each get their verdict, the hazard's subject and
// the CUDA lines of the PTX lines it cites; so does wsbar.cu, the pipeline with libcu++'s cuda::barrier.
// The committed PTX is read, nvcc never runs here.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

const DIR = 'test/fixtures/ptx';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

interface Loc { line: number; origin?: string }
interface Report {
  verdict: string;
  hazards: { kind: string; subject?: { name: string }; locations: Loc[]; cause?: { kind: string; message: string; locations?: Loc[] }; trace: { loc?: Loc }[] }[];
}

/** `check FILE --json` with the file's own launch line: no flags. */
async function checkJson(file: string): Promise<Report> {
  const r = await cli(['check', `${DIR}/${file}`, '--json', '--no-random-runs']);
  expect(r.err).toBe('');
  return JSON.parse(r.out) as Report;
}
const at = (ls: readonly Loc[]) => [...new Set(ls.map((l) => `${l.line} (${l.origin})`))];

describe('wspipe.cu: a warp-specialized 3-stage pipeline written with cuda::ptx, checked from its launch line', () => {
  it('the correct kernel is OK in every schedule', async () => {
    const j = await checkJson('wspipe.ptx');
    expect(j.verdict).toBe('ok');
    expect(j.hazards).toEqual([]);
  }, 60_000);

  it('bug1 (expect_tx 512 bytes short): a hang on full[0], cited first, its cause the tx-mismatch at the arrive.expect_tx', async () => {
    const j = await checkJson('planted/wspipe.bug1.ptx');
    expect(j.verdict).toBe('hang');
    const h = j.hazards[0]!;
    expect(h.kind).toBe('hang');
    // The producer blocked on empty[0] behind consumers on full[0]: the hang is full[0]'s.
    expect(h.subject?.name).toBe('full[0]');
    expect(at(h.locations)).toEqual(['142 (wspipe.cu:25, inlined at wspipe.cu:72)', '296 (wspipe.cu:25, inlined at wspipe.cu:51, inlined at wspipe.cu:47)']);
    expect(h.cause?.kind).toBe('tx-mismatch');
    expect(h.cause?.message).toMatch(/phase 0 of full\[0\] received 512 bytes more than it expected/);
    // The arrive.expect_tx inside invoke_one's lambda: cooperative_groups' frames are left out.
    expect(at(h.cause!.locations!)).toContain('314 (wspipe.cu:57, inlined at wspipe.cu:47)');
  }, 60_000);

  it('bug2 (warp 2 skips its wait on full): a race on tile[0] between its ld.shared and the bulk copy', async () => {
    const j = await checkJson('planted/wspipe.bug2.ptx');
    expect(j.verdict).toBe('race');
    const h = j.hazards[0]!;
    expect(h.subject?.name).toBe('tile[0]');
    expect(at(h.locations)).toEqual(['207 (wspipe.cu:75)', '336 (wspipe.cu:58, inlined at wspipe.cu:47)']);
    expect(h.trace.at(-1)?.loc).toMatchObject({ line: 207, origin: 'wspipe.cu:75' });
  }, 60_000);

  it('bug3 (the consumers start on parity 1): a race whose cause is the wait that passed on the fresh full barrier', async () => {
    const j = await checkJson('planted/wspipe.bug3.ptx');
    expect(j.verdict).toBe('race');
    const h = j.hazards[0]!;
    expect(h.subject?.name).toBe('tile[0]');
    expect(at(h.locations)).toEqual(['206 (wspipe.cu:75)', '334 (wspipe.cu:58, inlined at wspipe.cu:47)']);
    expect(h.cause?.kind).toBe('vacuous-wait');
    expect(at(h.cause!.locations!)).toEqual(['144 (wspipe.cu:25, inlined at wspipe.cu:67)']);
  }, 60_000);

  it('bug4 (empty counts 1 arrival for 2 consumer warps): a race on tile[0] whose cause is the count at the init', async () => {
    const j = await checkJson('planted/wspipe.bug4.ptx');
    expect(j.verdict).toBe('race');
    const h = j.hazards[0]!;
    expect(h.subject?.name).toBe('tile[0]');
    expect(h.cause?.kind).toBe('count-mismatch');
    expect(h.cause?.message).toMatch(/the count should be 2/);
    expect(at(h.cause!.locations!)).toEqual(['59 (wspipe.cu:39)', '232 (wspipe.cu:77)']);
  }, 60_000);

  it('wsbar.cu (cuda::barrier, memcpy_async_tx, barrier_arrive_tx) is OK; 16 bytes armed too many hang on full[0] at the arrive_tx', async () => {
    expect((await checkJson('wsbar.ptx')).verdict).toBe('ok');
    const j = await checkJson('planted/wsbar.bug1.ptx');
    expect(j.verdict).toBe('hang');
    const h = j.hazards[0]!;
    expect(h.subject?.name).toBe('full[0]');
    expect(at(h.locations)).toEqual(['155 (wsbar.cu:38)', '360 (wsbar.cu:25)']);
    expect(h.cause?.kind).toBe('tx-mismatch');
    expect(h.cause?.message).toMatch(/expects 16 more bytes than any copy in flight will deliver/);
    expect(at(h.cause!.locations!)).toEqual(['457 (wsbar.cu:28)', '155 (wsbar.cu:38)']);
  }, 60_000);

  it('a --tensor-map for a kernel that reads no tensor map is a warning at the parameter (its 1-D copies carry their size)', async () => {
    const r = await cli(['check', `${DIR}/wspipe.ptx`, '--tensor-map', 'param_0=4096']);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`${DIR}/wspipe.ptx:19:2: warning[W-ptx-launch]: --tensor-map param_0: the kernel reads no tensor map (no cp.async.bulk.tensor), so this box is not used`);
    // A kernel with a tensor copy takes its box without a word.
    const t = await cli(['check', `${DIR}/tma_pipeline.ptx`]);
    expect(t).toMatchObject({ code: 0, err: '' });
  }, 60_000);

  it('--trace: each slice of the counterexample names its PTX line and its CUDA line', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'mbsim-wspipe-')), 't.json');
    const r = await cli(['check', `${DIR}/planted/wspipe.bug2.ptx`, '--trace', out, '--quiet']);
    expect(r.code).toBe(1);
    const ev = (JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: { name: string; args?: { line?: string; cuda?: string } }[] }).traceEvents;
    const read = ev.find((e) => e.name === '17. ld.shared tile[0]');
    expect(read?.args).toEqual({ line: `${DIR}/planted/wspipe.bug2.ptx:207`, cuda: 'wspipe.cu:75' });
    const copy = ev.find((e) => e.name.startsWith('16. cp.async.bulk'));
    expect(copy?.args?.cuda).toBe('wspipe.cu:58, inlined at wspipe.cu:47');
  }, 60_000);
});
