// 2-D / 3-D blocks: `%tid.x/y/z` and `%ntid.x/y/z` of `--block X,Y[,Z]` (and a launch's
// `"block": [x, y, z]`), warps of consecutive linear thread ids (CUDA's rule), on nvcc's PTX of
// `block2d.cu` (roles by threadIdx.y; a block whose warps span two rows) and its planted twin.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { evalExpr } from '../src/kernel/expr.js';
import { main } from '../src/cli/main.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { blockDims, translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { threadIndex } from '../src/ptxi/translate.js';
import { threadKinds } from '../src/ptxi/analysis.js';
import { simulate } from '../src/sim/simulate.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

function program(file: string, launch: PtxLaunch) {
  const r = parsePtx(readFileSync(`test/fixtures/ptx/${file}`, 'utf8'), file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
const PIPE: PtxLaunch = { kernel: 'block2d', block: [64, 3, 1], params: { param_2: 4 }, tensorMaps: { param_0: 16384 } };

describe('the thread index of a 2-D / 3-D block', () => {
  it('tid.x + tid.y · x + tid.z · x · y is the linear id 32 · warp + lane, for whole-warp rows and rows that split warps', () => {
    for (const dims of [[64, 3, 1], [32, 2, 4], [16, 4, 1], [8, 4, 2], [48, 2, 1], [96, 1, 1], [4, 2, 4], [20, 8, 1]] as const) {
      const t = threadIndex(dims);
      const n = dims[0] * dims[1] * dims[2];
      for (let warp = 0; warp < n / 32; warp++) {
        for (let lane = 0; lane < 32; lane++) {
          const at = (nm: string) => (nm === 'warp' ? warp : nm === '%lead' ? lane : undefined);
          const [x, y, z] = (['%tid.x', '%tid.y', '%tid.z'] as const).map((k) => evalExpr(t[k](lane), at));
          const lead = (['%tid.x', '%tid.y', '%tid.z'] as const).map((k) => evalExpr(t[k]('lead'), at));
          expect([x, y, z], `${dims} warp ${warp} lane ${lane}`).toEqual(lead);
          expect(x! < dims[0] && y! < dims[1] && z! < dims[2]).toBe(true);
          expect(x! + y! * dims[0] + z! * dims[0] * dims[1]).toBe(32 * warp + lane);
        }
      }
      // Uniform kinds only where every lane of a warp has the same value; T only for 32 · k + lane.
      const k = threadKinds(dims);
      for (const [name, kind] of Object.entries(k)) {
        for (let warp = 0; warp < n / 32; warp++) {
          const vals = Array.from({ length: 32 }, (_, lane) => evalExpr(t[name as '%tid.x'](lane), (nm) => (nm === 'warp' ? warp : undefined)));
          if (kind === 'U') expect(new Set(vals).size, `${dims} ${name}`).toBe(1);
          if (kind === 'T') expect(vals.every((x, l) => x - l === vals[0])).toBe(true);
        }
      }
    }
    expect(threadKinds([64, 3, 1])).toEqual({ '%tid.x': 'T', '%tid.y': 'U', '%tid.z': 'U' });
    expect(threadKinds([16, 4, 1])).toEqual({ '%tid.x': 'V', '%tid.y': 'V', '%tid.z': 'U' });
    expect(threadKinds([8, 2, 4])).toEqual({ '%tid.x': 'V', '%tid.y': 'V', '%tid.z': 'V' });
  });

  it('blocks that are not whole warps or beyond CUDA\'s limits are refused', () => {
    expect(blockDims([64, 2])).toEqual([64, 2, 1]);
    expect(blockDims(96)).toEqual([96, 1, 1]);
    expect(blockDims([16, 3])).toBe('--block 16,3: mbsim runs whole warps: x · y · z = 48, a multiple of 32 from 32 to 1024');
    expect(blockDims([32, 1, 65])).toMatch(/CUDA's limits/);
    expect(blockDims([64, 32])).toMatch(/x · y · z = 2048/);
  });
});

describe('block2d.cu: roles by threadIdx.y in a (64, 3) block', () => {
  it('row 0 is warps 0-1 (thread (0, 0) of warp 0 issues the loads), rows 1-2 are warps 2-5 (they release the stages)', () => {
    const p = program('block2d.ptx', PIPE);
    expect(p.agents.map((a) => a.name)).toEqual(['block2d.w0', 'block2d.w1', 'block2d.w2', 'block2d.w3', 'block2d.w4', 'block2d.w5']);
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    const by = (pred: (e: NonNullable<typeof s.events>[number]) => boolean) => [...new Set((s.events ?? []).flatMap((e) => (pred(e) && 'agent' in e && (e.agent as number) >= 0 ? [p.agents[e.agent as number]!.name] : [])))].sort();
    // The barriers' init and the loads: warp 0 only (threadIdx.x == 0 && threadIdx.y == 0).
    expect(by((e) => e.e === 'op' && /mbarrier\.init|cp\.async\.bulk\.tensor/.test(JSON.stringify(e)))).toEqual(['block2d.w0']);
    // The release of `empty`: every thread of rows 1 and 2, 32 a warp; `empty` counts 64 · 2 = 128.
    const rel = (s.events ?? []).filter((e) => e.e === 'arrive' && e.agent >= 0 && p.agents[e.agent]!.name !== 'block2d.w0');
    expect([...new Set(rel.map((e) => (e.e === 'arrive' ? p.agents[e.agent]!.name : '')))].sort()).toEqual(['block2d.w2', 'block2d.w3', 'block2d.w4', 'block2d.w5']);
    expect(rel.every((e) => e.e === 'arrive' && e.count === 32)).toBe(true);
    expect(rel.length).toBe(4 * 4);
    const r = check(p, { maxStates: 200_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('-DBUG=1 (a consumer row releases the stage before reading it) is a race at the read', () => {
    const r = check(program('planted/block2d.bug1.ptx', PIPE), { maxStates: 200_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toContain('buf');
  });

  it('the same PTX as a 1-D block of 192 reads %ntid.y = 1: `empty` is initialized with count 64 · 0, an error', () => {
    const s = simulate(program('block2d.ptx', { ...PIPE, block: 192 }));
    expect(s.verdict).toBe('error');
    expect(s.diagnostics[0]!.diag.message).toBe('mbarrier.init count 0 is outside [1, 1048575]');
  });

  it('mbsim check FILE.ptx: the launch file gives "block": [64, 3, 1]; --block 64,3 the same; a bad shape exits 2', async () => {
    const ok = await cli(['check', 'test/fixtures/ptx/block2d.ptx']);
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    const flags = await cli(['check', 'test/fixtures/ptx/block2d.ptx', '--block', '64,3']);
    expect(flags.code).toBe(0);
    const bug = await cli(['check', 'test/fixtures/ptx/planted/block2d.bug1.ptx', '--format', 'short']);
    expect(bug.code).toBe(1);
    expect(bug.out).toMatch(/block2d\.bug1\.ptx:\d+:\d+: error\[race\]/);
    const bad = await cli(['check', 'test/fixtures/ptx/block2d.ptx', '--block', '16,3']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--block 16,3: mbsim runs whole warps: x · y · z = 48');
    const four = await cli(['check', 'test/fixtures/ptx/block2d.ptx', '--block', '1,2,3,4']);
    expect(four.code).toBe(2);
    expect(four.err).toContain('--block expects N or X,Y[,Z]');
  });
});

describe('block2d.cu rows16: a (16, 4) block, so one warp holds two rows', () => {
  const ROWS: PtxLaunch = { kernel: 'rows16', block: [16, 4] };
  it('rows 1-3 arrive: 16 lanes of warp 0 (row 1) and all of warp 1, 48 in all; OK', () => {
    const p = program('block2d.ptx', ROWS);
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    const arr = (s.events ?? []).flatMap((e) => (e.e === 'arrive' && e.agent >= 0 ? [`${p.agents[e.agent]!.name} ${e.count}`] : []));
    expect(arr.sort()).toEqual(['rows16.w0 16', 'rows16.w1 32']);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('-DBUG=1 (rows 2-3 only: 32 of 48 arrivals) hangs', () => {
    const r = check(program('planted/block2d.bug1.ptx', ROWS), { maxStates: 100_000 });
    expect(r.verdict).toBe('hang');
  });

  it('a launch line with "block": [16, 3] (48 threads) exits 2 at its place; [16, 4] checks OK', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-block2d-'));
    const f = join(dir, 'rows.ptx');
    const text = readFileSync('test/fixtures/ptx/block2d.ptx', 'utf8');
    const line = text.split('\n').length;
    writeFileSync(f, `${text}// # launch: {"kernel": "rows16", "block": [16, 3]}\n`);
    const r = await cli(['check', f]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}:${line}:44: error: launch: "block": [16, 3]: mbsim runs whole warps: x · y · z = 48, a multiple of 32 from 32 to 1024`);
    writeFileSync(f, `${text}// # launch: {"kernel": "rows16", "block": [16, 4, 1]}\n`);
    const ok = await cli(['check', f]);
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
  });
});
