/**
 * Every finding of `mbsim check` names its place: the text report an `at file:line:col` line (with
 * the CUDA line of a PTX kernel compiled with -lineinfo), `--format short` a
 * `file:line:col: error[kind]:` line and a `file.cu:L: note: CUDA source of …` line after it; and
 * the coverage line says what its depth counts when a trace is longer.
 */
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const RING = ['test/cli/fixtures/ring_parity.ptx', '--block', '64', '--param', 'param_2=4'];

describe('finding locations', () => {
  test('text report: a race, a scope error and a static warning each carry file:line:col, with --max-traces 0 too', async () => {
    const b15 = await cli(['check', 'examples/bugs/B15.mbk', '--max-traces', '0']);
    expect(b15.out).toMatch(/1\. RACE[^]*\n   at examples\/bugs\/B15\.mbk:19:9/);
    const b20 = await cli(['check', 'examples/bugs/B20.mbk', '--max-traces', '0']);
    expect(b20.out).toMatch(/1\. SCOPE[^]*\n   at examples\/bugs\/B20\.mbk:21:5\n/);
  });

  test('text report of a -lineinfo PTX kernel: the race and the warnings give the PTX and the CUDA line', async () => {
    const r = await cli(['check', ...RING]);
    expect(r.out).toMatch(/1\. RACE[^]*?\n   at test\/cli\/fixtures\/ring_parity\.ptx:118:2 \(ring\.cu:71\)/);
    // Every numbered finding has an `at` line.
    const findings = r.out.split(/\n(?=\d+\. )/).slice(1);
    expect(findings.length).toBeGreaterThan(1);
    for (const f of findings) expect(f).toMatch(/\n   at test\/cli\/fixtures\/ring_parity\.ptx:\d+:\d+ \(ring\.cu:\d+/);
  });

  test('--format short: each finding of a -lineinfo PTX kernel is followed by a note located at its CUDA line', async () => {
    const r = await cli(['check', ...RING, '--format', 'short']);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toMatch(/^test\/cli\/fixtures\/ring_parity\.ptx:118:2: error\[race\]: /);
    expect(lines[1]).toBe('ring.cu:71: note: CUDA source of test/cli/fixtures/ring_parity.ptx:118');
    // Every line but the summary is `file:line[:col]: severity…` (grep and editors read it).
    for (const l of lines.slice(0, -1)) expect(l).toMatch(/^[^\s:]+:\d+(:\d+)?: (error|warning|note)[[:]/);
    expect(lines.filter((l) => / note: CUDA source of /.test(l)).length).toBe(lines.length - 1 - lines.filter((l) => / note: /.test(l)).length);
  });

  test('the coverage line says the depth counts schedule choices when a trace is longer (B20: depth 1, 4 steps)', async () => {
    const r = await cli(['check', 'examples/bugs/B20.mbk']);
    expect(r.out).toMatch(/depth 1 \(schedule choices; a trace also shows the forced steps between them\)/);
    expect(r.out).toMatch(/shortest trace \(4 steps\)/);
  });
});
