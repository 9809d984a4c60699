// A `--param` value that does not fit its parameter's declared width: CUDA passes the C type's
// bits and the kernel's `ld.param` of that width reads the low bits, so the value runs wrapped;
// `run` and `check` say so once at the parameter's declaration (a warning, not an error).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { unfitParams } from '../src/cli/ptx-load.js';
import { parsePtx } from '../src/ptx/index.js';
import { SCALARS } from './support/ptx-scalars.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const mod = () => {
  const r = parsePtx(SCALARS, 'scalars.ptx');
  if (!r.ok) throw new Error(r.diagnostic.message);
  return r.module;
};

describe('a --param value wider than its parameter', () => {
  it('is named with its range and the low bits the kernel reads; values of either signedness that fit are not', () => {
    const d = unfitParams(mod(), { params: { param_0: 64, param_1: -1, param_2: 2 ** 32 + 2 } });
    expect(d.map((x) => [x.line, x.code, x.message])).toEqual([
      [4, 'W-ptx-launch', 'param_2 = 4294967298 does not fit the 32-bit parameter (.u32, -2147483648 .. 4294967295): the kernel\'s 32-bit load reads its low 32 bits, 2'],
    ]);
    expect(unfitParams(mod(), { params: { param_0: 4294967295, param_1: -2147483648 } })).toEqual([]);
    expect(unfitParams(mod(), { params: { param_1: -2147483649 } }).map((x) => x.message)).toEqual([
      'param_1 = -2147483649 does not fit the 32-bit parameter (.u32, -2147483648 .. 4294967295): the kernel\'s 32-bit load reads its low 32 bits, 2147483647',
    ]);
  });
  it('check: the warning on stderr, then the check of the wrapped value (param_1 + param_2 = 3: ok)', async () => {
    const f = join(mkdtempSync(join(tmpdir(), 'mbsim-width-')), 'scalars.ptx');
    writeFileSync(f, SCALARS);
    const r = await cli(['check', f, '--param', 'param_0=64', '--param', 'param_1=1', '--param', `param_2=${2 ** 32 + 2}`, '--format', 'short']);
    expect(r.err.split('\n')[0]).toMatch(new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4:\\d+: warning\\[W-ptx-launch\\]: param_2 = 4294967298 does not fit the 32-bit parameter`));
    expect(r.code).toBe(0);
    expect(r.out).toContain('OK');
  }, 60_000);
});
