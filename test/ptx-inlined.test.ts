// The call sites of inlined code (src/ptx/inlined.ts): a hazard inside a __forceinline__ helper
// cites the helper's CUDA line and the lines it was inlined at, in text and JSON reports.
// test/fixtures/ptx/src/inlined.cu + inlined.cuh (nvcc 13 -lineinfo, src/build.sh) and its two
// planted twins; hand-written .loc chains.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { sarifOptions } from '../src/cli/package-info.js';
import { check, checkSarif, instantiate } from '../src/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { cudaLocation, cudaOrigin, inlineChain, originText, parsePtx, type Instruction, type Module, type Stmt } from '../src/ptx/index.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}
function parse(src: string, file: string): Module {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return r.module;
}
function instructionAt(m: Module, line: number): Instruction {
  let found: Instruction | undefined;
  const walk = (ss: readonly Stmt[]): void => {
    for (const s of ss) {
      if (s.kind === 'instr' && s.pos.line === line) found = s;
      if (s.kind === 'block') walk(s.stmts);
    }
  };
  for (const f of m.items) if (f.kind === 'function' && f.body) walk(f.body.stmts);
  if (!found) throw new Error(`no instruction at line ${line}`);
  return found;
}

const BUG1 = 'test/fixtures/ptx/planted/inlined.bug1.ptx';
const BUG2 = 'test/fixtures/ptx/planted/inlined.bug2.ptx';

describe('inlined_at chains', () => {
  it('the consumer\'s try_wait: CCCL\'s wrapper inlined into wait_phase() inlined into consume() inlined into the kernel', () => {
    const m = parse(readFileSync(BUG1, 'utf8'), BUG1);
    const c = cudaLocation(m, instructionAt(m, 117));
    expect(c).toEqual({
      path: '<cuda>/include/cccl/cuda/__ptx/instructions/generated/mbarrier_try_wait_parity.h', line: 26, col: 13,
      inlinedAt: { path: 'inlined.cuh', line: 19, col: 3, inlinedAt: { path: 'inlined.cuh', line: 35, col: 3, inlinedAt: { path: 'inlined.cu', line: 22, col: 5 } } },
    });
    expect(cudaOrigin(c)).toBe('inlined.cuh:19, inlined at inlined.cuh:35, inlined at inlined.cu:22');
    // the producer's copy of the same helper line is inlined elsewhere (produce(), line 24 of the header)
    expect(cudaOrigin(cudaLocation(m, instructionAt(m, 192)))).toBe('inlined.cuh:19, inlined at inlined.cuh:24, inlined at inlined.cu:19');
  });

  it('hand-written chains: followed through the latest earlier .loc at the call site, never into another function', () => {
    const src = `.version 8.0
.target sm_90a
.address_size 64
.visible .entry a()
{
	.loc 1 5 1
	.loc 2 10 3, function_name $L__s0, inlined_at 1 5 1
	.loc 2 20 3, function_name $L__s1, inlined_at 2 10 3
	.loc 3 7 1, function_name $L__s2, inlined_at 2 20 3
	membar.cta;
	.loc 2 10 3, function_name $L__s0, inlined_at 1 6 1
	.loc 3 7 1, function_name $L__s2, inlined_at 2 10 3
	membar.gl;
	ret;
}
.visible .entry b()
{
	.loc 3 7 1, function_name $L__s2, inlined_at 2 20 3
	membar.sys;
	ret;
}
	.file 1 "k.cu"
	.file 2 "h.cuh"
	.file 3 "g.cuh"
`;
    const m = parse(src, 'k.ptx');
    const loc = (line: number) => instructionAt(m, line).loc!;
    expect(inlineChain(m, loc(10))).toEqual([{ fileIndex: 2, line: 20, col: 3 }, { fileIndex: 2, line: 10, col: 3 }, { fileIndex: 1, line: 5, col: 1 }]);
    // the latest .loc at 2:10:3 before line 13 is the one inlined at 1:6:1
    expect(cudaOrigin(cudaLocation(m, instructionAt(m, 13)))).toBe('g.cuh:7, inlined at h.cuh:10, inlined at k.cu:6');
    // b's .loc names a call site whose .loc is in a(): the chain stops at it
    expect(cudaOrigin(cudaLocation(m, instructionAt(m, 19)))).toBe('g.cuh:7, inlined at h.cuh:20');
  });

  it('library frames innermost are left out; a chain of library frames only names the innermost', () => {
    expect(originText([{ path: '<cuda>/include/cccl/x.h', line: 3 }, { path: 'h.cuh', line: 9 }, { path: 'k.cu', line: 40 }])).toBe('h.cuh:9, inlined at k.cu:40');
    expect(originText([{ path: '<cuda>/include/cccl/x.h', line: 3 }, { path: '<cuda>/include/cccl/y.h', line: 5 }])).toBe('<cuda>/include/cccl/x.h:3');
    expect(originText([{ path: 'k.cu', line: 0 }])).toBeUndefined();
  });

  it('library frames between two user frames are left out (a lambda run by cooperative_groups::invoke_one)', () => {
    const inc = '/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/cooperative_groups/details/invoke.h';
    expect(originText([
      { path: '/tmp/wsp/wspipe.cu', line: 57 }, { path: inc, line: 100 }, { path: inc, line: 154 }, { path: '/tmp/wsp/wspipe.cu', line: 47 },
    ])).toBe('/tmp/wsp/wspipe.cu:57, inlined at /tmp/wsp/wspipe.cu:47');
    // a user functor inlined into a library kernel: its line alone
    expect(originText([{ path: 'op.cuh', line: 3 }, { path: '<cuda>/include/cccl/cub/k.cuh', line: 70 }])).toBe('op.cuh:3');
  });
});

describe('reports of hazards inside inlined helpers', () => {
  it('the OK kernel stays OK', async () => {
    const r = await cli(['check', 'test/fixtures/ptx/inlined.ptx', '--param', 'param_2=3']);
    expect(r.err).toBe('');
    expect(r.out).toContain('verdict: OK');
  });

  it('text: the hang in wait_phase() cites both waits with their call sites, the one on the barrier whose tx-count can never reach 0 first', async () => {
    const r = await cli(['check', BUG1, '--param', 'param_2=3']);
    expect(r.code).toBe(1);
    // The producer waits on empty[0], the consumer on full[0], whose expect_tx is short: the hang is full[0]'s.
    expect(r.out).toContain('HANG on barrier full[0]');
    expect(r.out).toContain(`at ${BUG1}:117:2 (inlined.cuh:19, inlined at inlined.cuh:35, inlined at inlined.cu:22), ${BUG1}:192:2 (inlined.cuh:19, inlined at inlined.cuh:24, inlined at inlined.cu:19)`);
  });

  it('JSON: the race\'s locations and trace steps carry the chain as their origin', async () => {
    const r = await cli(['check', BUG2, '--param', 'param_2=3', '--json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; hazards: { locations: { line: number; origin?: string }[]; trace: { loc?: { line: number; origin?: string } }[] }[] };
    expect(j.verdict).toBe('race');
    const h = j.hazards[0]!;
    expect(h.locations.map((l) => `${l.line} ${l.origin}`)).toEqual(['150 inlined.cuh:38, inlined at inlined.cu:22', '227 inlined.cuh:31, inlined at inlined.cu:19', '140 inlined.cuh:37, inlined at inlined.cu:22']);
    // the third: the early release (consume()'s arrive on empty before its read), the fix's site
    expect(h.trace.at(-1)?.loc).toMatchObject({ line: 150, origin: 'inlined.cuh:38, inlined at inlined.cu:22' });
  });

  it('SARIF: the CUDA lines and their call sites are related locations of the result; each code-flow step names them', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'mbsim-inlined-')), 'x.sarif');
    const r = await cli(['check', BUG1, '--param', 'param_2=3', '--sarif', out]);
    expect(r.code).toBe(1);
    type Loc = { id?: number; physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } }; message?: { text: string } };
    const log = JSON.parse(readFileSync(out, 'utf8')) as { runs: { results: { locations: Loc[]; relatedLocations: Loc[]; codeFlows: { threadFlows: { locations: { location: Loc }[] }[] }[] }[] }[] };
    const res = log.runs[0]!.results[0]!;
    expect(res.locations[0]!.physicalLocation.region.startLine).toBe(117);
    const cuda = res.relatedLocations.filter((l) => l.message).map((l) => `${l.id} ${l.physicalLocation.artifactLocation.uri}:${l.physicalLocation.region.startLine} ${l.message!.text}`);
    expect(cuda).toEqual([
      '2 test/fixtures/ptx/planted/inlined.cuh:19 CUDA source of PTX line 117: inlined.cuh:19, inlined at inlined.cuh:35, inlined at inlined.cu:22',
      '3 test/fixtures/ptx/planted/inlined.cuh:35 inlined at inlined.cuh:35',
      '4 test/fixtures/ptx/planted/inlined.cu:22 inlined at inlined.cu:22',
      '5 test/fixtures/ptx/planted/inlined.cuh:19 CUDA source of PTX line 192: inlined.cuh:19, inlined at inlined.cuh:24, inlined at inlined.cu:19',
      '6 test/fixtures/ptx/planted/inlined.cuh:24 inlined at inlined.cuh:24',
      '7 test/fixtures/ptx/planted/inlined.cu:19 inlined at inlined.cu:19',
    ]);
    const steps = res.codeFlows[0]!.threadFlows[0]!.locations.map((s) => s.location.message!.text);
    expect(steps.at(-1)).toBe('15. TMA copy (from inlined.w0): 4096 B land in stage[1] → complete_tx full[1] (inlined.cuh:31, inlined at inlined.cu:19)');
  });

  it('the library\'s checkSarif gives the CLI\'s --sarif log: one implementation of the CUDA lines', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'mbsim-inlined-')), 'x.sarif');
    expect((await cli(['check', BUG1, '--param', 'param_2=3', '--sarif', out])).code).toBe(1);
    const kernel = translatePtx(parse(readFileSync(BUG1, 'utf8'), BUG1), { params: { param_2: 3 } }).kernel;
    const lib = checkSarif(check(instantiate(kernel)), sarifOptions());
    type Log = { runs: { properties: { coverage?: unknown }; tool: { driver: { version?: string } } }[] };
    // The coverage holds the wall time and memory of each run; everything else is equal.
    const bare = (log: Log) => { for (const run of log.runs) delete run.properties.coverage; return log; };
    const cliLog = bare(JSON.parse(readFileSync(out, 'utf8')) as Log);
    expect(bare(JSON.parse(JSON.stringify(lib)) as Log)).toEqual(cliLog);
    expect(JSON.stringify(cliLog)).toContain('CUDA source of PTX line 192');
    // The package's version is the tool's.
    expect(cliLog.runs[0]!.tool.driver.version).toBe(JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version);
  });

  it('PTX without .loc lines: the log has no CUDA lines', () => {
    const kernel = translatePtx(parse(readFileSync(BUG1, 'utf8').replace(/^\s*\.loc\b.*$/gm, ''), 'noloc.ptx'), { params: { param_2: 3 } }).kernel;
    const log = JSON.stringify(checkSarif(check(instantiate(kernel))));
    expect(log).not.toContain('CUDA source');
    expect(log).toContain('"startLine"');
  });
});
