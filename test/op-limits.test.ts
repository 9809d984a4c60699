import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { kernel } from '../src/kernel/builder.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate, KernelError } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';

/**
 * Operand values the PTX ISA rules out, rejected before anything runs (kernel/op-limits.ts): a
 * `cp.async` cp-size other than 4, 8 or 16 bytes (§9.7.9.25.3.1), a negative
 * `cp.async.wait_group` count (§9.7.9.25.3.3), a `try_cancel` response buffer of fewer than 16
 * bytes (§9.7.13.17); in sketches, through the builder and in PTX.
 */
const diags = (src: string) => parseSketch(src, 't.mbk').diagnostics.map((d) => `${d.line}:${d.col} ${d.code} ${d.message}`);

const copy = (bytes: string, n = '0') => `kernel c arch=sm_90a
smem A bytes=1024
role r warps=1:
    cp.async A, ${bytes}
    cp.async.commit_group
    cp.async.wait_group ${n}
    ld.shared A
`;
const cancel = (resp: string, ref = 'resp') => `kernel l arch=sm_100a
barrier got count=1
smem ${resp}
role sched warps=1 per=one:
    mbarrier.arrive.expect_tx got, 16
    clusterlaunchcontrol.try_cancel ${ref}, got
    mbarrier.try_wait.parity got, 0
`;

describe('the sketch language', () => {
  test('cp.async of 4, 8 or 16 bytes is accepted; 12, 32 and 0 are E-cp-size at the operand', () => {
    for (const b of ['4', '8', '16']) expect(diags(copy(b))).toEqual([]);
    expect(diags(copy('12'))).toEqual(['4:17 E-cp-size cp.async copies 4, 8 or 16 bytes per thread (its cp-size, PTX ISA §9.7.9.25.3.1), not 12']);
    expect(diags(copy('32'))[0]).toMatch(/^4:17 E-cp-size .* not 32$/);
    expect(diags(copy('2 * 0'))[0]).toMatch(/^4:17 E-cp-size .* not 0$/);
  });

  test('a parameter that makes the size wrong is caught too; its value --set at the CLI at instantiation', () => {
    const src = copy('SZ').replace('smem A', 'param SZ = 8\nsmem A');
    expect(diags(src)).toEqual([]);
    expect(diags(src.replace('SZ = 8', 'SZ = 6'))[0]).toMatch(/^5:17 E-cp-size .* not 6$/);
  });

  test('cp.async.wait_group -1 is E-wait-group; 0 and wait_all are accepted', () => {
    expect(diags(copy('16', '-1'))).toEqual(['6:25 E-wait-group cp.async.wait_group N takes a non-negative integer (the most recent groups left pending, PTX ISA §9.7.9.25.3.3), not -1']);
    expect(diags(copy('16', '1 - 2'))[0]).toMatch(/^6:25 E-wait-group .* not -1$/);
    expect(diags(copy('16', '0'))).toEqual([]);
  });

  test('a try_cancel response buffer of fewer than 16 bytes from the reference is E-kernel-clc-response', () => {
    expect(diags(cancel('resp bytes=16'))).toEqual([]);
    expect(diags(cancel('resp bytes=8'))).toEqual(['6:5 E-kernel-clc-response clusterlaunchcontrol.try_cancel writes a 16-byte response (PTX ISA §9.7.13.17), but resp has 8 bytes there']);
    expect(diags(cancel('resp bytes=32', 'resp + 16'))).toEqual([]);
    expect(diags(cancel('resp bytes=32', 'resp + 24'))[0]).toMatch(/^6:5 E-kernel-clc-response .* resp has 8 bytes there$/);
  });
});

describe('the command line: a located error with a caret, exit code 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-op-limits-'));
  async function cli(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
    return { code, text: [...out, ...err].join('\n') };
  }
  const file = (name: string, src: string) => {
    const f = join(dir, name);
    writeFileSync(f, src);
    return f;
  };

  test('check of a 12-byte cp.async, a wait_group -1 and a short response buffer', async () => {
    const a = file('size.mbk', copy('12'));
    let r = await cli(['check', a]);
    expect(r.code).toBe(2);
    expect(r.text).toContain(`${a}:4:17: error[E-cp-size]: cp.async copies 4, 8 or 16 bytes per thread`);
    expect(r.text).toMatch(/cp\.async A, 12\n\s+\^~/);
    r = await cli(['check', file('wait.mbk', copy('16', '-1'))]);
    expect(r.code).toBe(2);
    expect(r.text).toContain(':6:25: error[E-wait-group]: cp.async.wait_group N takes a non-negative integer');
    r = await cli(['run', file('resp.mbk', cancel('resp bytes=8'))]);
    expect(r.code).toBe(2);
    expect(r.text).toContain(':6:5: error[E-kernel-clc-response]: clusterlaunchcontrol.try_cancel writes a 16-byte response');
  });

  test('--set of a parameter that makes wait_group negative: exit 2 at the line', async () => {
    const f = file('param.mbk', copy('16', 'N - 2').replace('smem A', 'param N = 2\nsmem A'));
    expect((await cli(['check', f])).code).toBe(0);
    const r = await cli(['check', f, '--set', 'N=1']);
    expect(r.code).toBe(2);
    expect(r.text).toContain(`${f}:7:5: error[wait-group]: cp.async.wait_group N takes a non-negative integer`);
  });
});

describe('a cp.async size that only the launch\'s parameters make wrong', () => {
  const src = copy('SZ').replace('smem A', 'param SZ = 8\nsmem A');

  test('instantiate rejects it with the operation\'s location (KernelError cp-size); 4, 8, 16 pass', () => {
    const k = parseSketch(src, 't.mbk').kernel!;
    let err: unknown;
    try {
      instantiate(k, { SZ: 12 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KernelError);
    expect((err as KernelError).code).toBe('cp-size');
    expect((err as KernelError).message).toBe('cp.async copies 4, 8 or 16 bytes per thread (its cp-size, PTX ISA §9.7.9.25.3.1), not 12');
    expect([(err as KernelError).loc?.line, (err as KernelError).loc?.col]).toEqual([5, 5]);
    for (const n of [4, 8, 16]) expect(() => instantiate(k, { SZ: n })).not.toThrow();
  });

  test('the builder\'s expression of parameters: the same error at instantiation', () => {
    const k = kernel('k', { arch: 'sm_90a', params: { N: 4 } }).smem('A', 1, 1024, { scalar: true })
      .role('r', { warps: 1 }, (r) => r.cpAsync('A', 'N * 2').cpAsyncCommit().cpAsyncWait(0)).build();
    expect(() => instantiate(k)).not.toThrow();
    expect(() => instantiate(k, { N: 3 })).toThrow(/cp\.async copies 4, 8 or 16 bytes per thread .* not 6$/);
  });

  test('the CLI: --set SZ=12 exits 2 with file:line:col and no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-cp-size-'));
    const f = join(dir, 'size.mbk');
    writeFileSync(f, src);
    const out: string[] = [];
    const run = (args: string[]) => main(args, { out: (s) => out.push(s), err: (s) => out.push(s), color: false });
    expect(await run(['check', f, '--set', 'SZ=16'])).toBe(0);
    out.length = 0;
    expect(await run(['check', f, '--set', 'SZ=12'])).toBe(2);
    const text = out.join('\n');
    expect(text).toContain(`${f}:5:5: error[cp-size]: cp.async copies 4, 8 or 16 bytes per thread (its cp-size, PTX ISA §9.7.9.25.3.1), not 12`);
    expect(text).not.toMatch(/\n\s+at /);
    out.length = 0;
    expect(await run(['run', f, '--set', 'SZ=2'])).toBe(2);
    expect(out.join('\n')).toContain(`${f}:5:5: error[cp-size]:`);
  });
});

describe('the builder', () => {
  const base = () => kernel('k', { arch: 'sm_90a', params: { N: 1 } }).smem('A', 1, 1024, { scalar: true });

  test('cpAsync of 12 bytes and cpAsyncWait(-1) are TypeErrors naming the method', () => {
    expect(() => base().role('r', { warps: 1 }, (r) => r.cpAsync('A', 12))).toThrow(new TypeError('cpAsync: cp.async copies 4, 8 or 16 bytes per thread (its cp-size, PTX ISA §9.7.9.25.3.1), not 12'));
    expect(() => base().role('r', { warps: 1 }, (r) => r.cpAsyncWait(-1))).toThrow(/^cpAsyncWait: cp\.async\.wait_group N takes a non-negative integer .* not -1$/);
    expect(() => base().role('r', { warps: 1 }, (r) => r.cpAsync('A', 16).cpAsyncWait(0).cpAsyncWait('all'))).not.toThrow();
  });

  test('an expression of parameters is checked at instantiation: a KernelError at the calling line', () => {
    const line = Number(new Error().stack!.split('\n')[1]!.match(/:(\d+):\d+\)?$/)![1]) + 1;
    const k = base().role('r', { warps: 1 }, (r) => r.cpAsync('A', 16).cpAsyncWait('N - 2')).build();
    let err: unknown;
    try {
      instantiate(k);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KernelError);
    expect((err as KernelError).code).toBe('wait-group');
    expect((err as KernelError).loc?.line).toBe(line);
    expect(() => instantiate(k, { N: 2 })).not.toThrow();
  });

  test('tryCancel into an 8-byte buffer: KernelError clc-response at instantiation', () => {
    const k = (bytes: number) => kernel('l', { arch: 'sm_100a' }).barrier('got', { count: 1 }).smem('resp', 1, bytes, { scalar: true })
      .role('s', { warps: 1, per: 'one' }, (r) => r.arriveExpectTx('got', 16).tryCancel('resp', 'got').wait('got', 0)).build();
    expect(() => instantiate(k(8))).toThrow(/try_cancel writes a 16-byte response \(PTX ISA §9\.7\.13\.17\), but resp has 8 bytes there/);
    expect(() => instantiate(k(16))).not.toThrow();
  });
});

describe('PTX input: the same rules', () => {
  const F = 'test/fixtures/ptx/ops/cp_async.ptx';
  const load = (src: string) => {
    const r = parsePtx(src, F);
    if (!r.ok) throw new Error(r.diagnostic.message);
    return instantiate(translatePtx(r.module, { block: 64, params: {} }).kernel);
  };
  const src = readFileSync(F, 'utf8');

  test('the fixture (cp-size 4, wait_group 0) translates', () => {
    expect(load(src).agents.length).toBeGreaterThan(0);
  });

  test('a cp-size of 12 is a KernelError at its line; a negative wait_group too', () => {
    expect(src).toContain('cp.async.ca.shared.global [%r5], [%rd2], 4;\ncp.async.mbarrier');
    let err: unknown;
    try {
      load(src.replace('cp.async.ca.shared.global [%r5], [%rd2], 4;\ncp.async.mbarrier', 'cp.async.ca.shared.global [%r5], [%rd2], 12;\ncp.async.mbarrier'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KernelError);
    expect((err as KernelError).code).toBe('cp-size');
    expect((err as KernelError).message).toContain('cp.async copies 4, 8 or 16 bytes per thread');
    expect((err as KernelError).loc?.line).toBe(24);
    expect(() => load(src.replace('cp.async.wait_group 0;', 'cp.async.wait_group -1;'))).toThrow(/non-negative integer .* not -1/);
  });
});
