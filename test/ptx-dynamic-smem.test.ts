// A launch without `--dynamic-smem` for a kernel that names its `extern .shared` array: no PTX file
// carries that size, so the array has none and the first access traps outside it (`index-range`,
// which names no flag). The CLI warns at the declaration with the flag to give (src/cli/ptx-load.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

/** One warp: thread 0 inits a barrier at byte `at` of the dynamic array, every thread arrives and waits. */
const kernel = (named: boolean) => [
  '.version 9.0', '.target sm_90a', '.address_size 64',
  '.extern .shared .align 1024 .b8 dsmem[];',
  '.visible .entry k()', '.reqntid 32, 1, 1', '{',
  '.reg .pred %p<4>;', '.reg .b32 %r<8>;', '.shared .align 8 .b8 own[8];',
  named ? 'mov.u32 %r2, dsmem;' : 'mov.u32 %r2, own;',
  named ? 'add.s32 %r2, %r2, 4096;' : '',
  'mov.u32 %r1, %tid.x;', 'setp.ne.s32 %p1, %r1, 0;', '@%p1 bra SKIP;',
  'mbarrier.init.shared.b64 [%r2], 32;',
  'SKIP:', 'bar.sync 0;', 'mbarrier.arrive.shared.b64 _, [%r2];',
  'W:', 'mbarrier.try_wait.parity.shared.b64 %p2, [%r2], 0;', '@!%p2 bra W;',
  'ret;', '}', '',
].join('\n');

describe('the dynamic shared memory\'s size', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-dsmem-'));
  const named = join(dir, 'named.ptx');
  const unnamed = join(dir, 'unnamed.ptx');
  writeFileSync(named, kernel(true));
  writeFileSync(unnamed, kernel(false));

  it('without --dynamic-smem: a warning at the extern array naming the flag, then the trap outside it', async () => {
    const r = await cli(['run', named]);
    expect(r.err).toContain(`${named}:4:33: warning[W-ptx-launch]: the dynamic shared-memory array dsmem has no size`);
    expect(r.err).toContain('  .extern .shared .align 1024 .b8 dsmem[];\n                                  ^~~~~');
    expect(r.err).toMatch(/hint: .*--dynamic-smem BYTES/);
    expect(r.code).toBe(1);
    expect(r.out).toContain('index-range');
  });

  it('check warns the same way', async () => {
    const r = await cli(['check', named, '--no-random-runs']);
    expect(r.err).toContain('warning[W-ptx-launch]');
  });

  it('with --dynamic-smem (or dynamicSmem in the launch line): no warning, and the kernel runs', async () => {
    const r = await cli(['run', named, '--dynamic-smem', '8192']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const withLine = join(dir, 'line.ptx');
    writeFileSync(withLine, `${kernel(true)}// # launch: {"dynamicSmem": 8192}\n`);
    const r2 = await cli(['run', withLine]);
    expect(r2.err).toBe('');
    expect(r2.code).toBe(0);
  });

  it('an extern array that no instruction names needs no size: no warning', async () => {
    const r = await cli(['run', unnamed]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });
});
