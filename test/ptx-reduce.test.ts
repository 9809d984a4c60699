// The reduction operator and element type of red.async and cp.reduce.async.bulk in PTX (issue 12;
// PTX ISA §9.7.13.7, §9.7.9.25.4.2): test/fixtures/ptx/ops/red_async.ptx, written by hand and
// accepted by ptxas 13.0 -arch=sm_90a, keeps `.add.u32` on both operations; a type the operator
// does not take (ptxas refuses each one changed here) is an error at the type, exit 2.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { main } from '../src/cli/main.js';
import type { Op } from '../src/kernel/ir.js';
import { instantiate, KernelError } from '../src/machine/program.js';
import { opText } from '../src/machine/optext.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

const F = 'test/fixtures/ptx/ops/red_async.ptx';
const SRC = readFileSync(F, 'utf8');
const RED = 'bytes.add.u32 [%r6], %r1';
const BULK = 'bulk_group.add.u32';

function kernelOf(src: string, file = F) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return translatePtx(r.module, { cluster: 2 }).kernel;
}
/** `SRC` with `from` (which must occur) replaced by `to`. */
function change(from: string, to: string): string {
  expect(SRC).toContain(from);
  return SRC.replace(from, to);
}
/** The reductions of a kernel, as their operations. */
function reductions(src: string): Op[] {
  const out: Op[] = [];
  const walk = (ss: readonly import('../src/kernel/ir.js').Stmt[]): void => {
    for (const s of ss) {
      if (s.s === 'op' && ((s.op.op === 'st.async' && s.op.red) || s.op.op === 'cp.reduce.async.bulk')) out.push(s.op);
      if (s.s === 'if') { walk(s.then); walk(s.else ?? []); } else if (s.s === 'for' || s.s === 'elect') walk(s.body);
    }
  };
  for (const r of kernelOf(src).roles) walk(r.body);
  return out;
}
function translateError(src: string): KernelError {
  try {
    kernelOf(src);
  } catch (err) {
    if (err instanceof KernelError) return err;
    throw err;
  }
  throw new Error('translated');
}
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

describe('ops/red_async.ptx: red.async into the peer, then a bulk reduction of the result', () => {
  it('keeps operator and type on both operations and in their text; OK in every schedule', () => {
    // The bulk reduction under a lane predicate is one operation per lane that may issue it (each
    // with its lane's operands), all alike here.
    const ops = reductions(SRC);
    const unique = (l: string[]) => [...new Set(l)];
    expect(unique(ops.map((o) => ('redop' in o ? `${o.op} ${o.redop} ${o.redType}` : '')))).toEqual(['st.async add u32', 'cp.reduce.async.bulk add u32']);
    expect(unique(ops.map((o) => opText(o).split(' ')[0]!))).toEqual(['red.async.add.u32', 'cp.reduce.async.bulk.add.u32']);
    const p = instantiate(kernelOf(SRC));
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    const r = check(p, { maxStates: 100_000 });
    expect([r.verdict, r.complete]).toEqual(['ok', true]);
  });

  it.each([
    [RED, 'bytes.add.s64 [%r6], %rd1', 's64'],
    [RED, 'bytes.xor.b32 [%r6], %r1', 'b32'],
    [RED, 'bytes.dec.u32 [%r6], %r1', 'u32'],
    [BULK, 'bulk_group.add.noftz.bf16', 'bf16'],
    [BULK, 'bulk_group.max.s64', 's64'],
    [BULK, 'bulk_group.or.b64', 'b64'],
  ])('%s → %s (ptxas accepts it): type %s', (from, to, type) => {
    const ops = reductions(change(from, to));
    expect(ops.some((o) => 'redType' in o && o.redType === type && opText(o).includes(`.${type} `))).toBe(true);
  });

  it.each([
    [RED, 'bytes.add.b32 [%r6], %r1', 28, 75, 'red.async.add takes .u32, .s32, .u64, .s64, not .b32 (PTX ISA §9.7.13.7)'],
    [RED, 'bytes.and.u32 [%r6], %r1', 28, 75, 'red.async.and takes .b32, not .u32 (PTX ISA §9.7.13.7)'],
    [RED, 'bytes.min.u64 [%r6], %rd1', 28, 75, 'red.async.min takes .u32, .s32, not .u64 (PTX ISA §9.7.13.7)'],
    [BULK, 'bulk_group.inc.u64', 33, 60, 'cp.reduce.async.bulk.inc takes .u32, not .u64 (PTX ISA §9.7.9.25.4.2)'],
    [BULK, 'bulk_group.add.f16', 33, 60, 'cp.reduce.async.bulk.add.f16 needs .noftz: write .add.noftz.f16 (PTX ISA §9.7.9.25.4.2)'],
    [BULK, 'bulk_group.add.noftz.f32', 33, 66, '.noftz is only for .add of .f16 and .bf16, not .add.f32 (PTX ISA §9.7.9.25.4.2)'],
  ])('%s → %s (ptxas refuses it): an error at %i:%i', (from, to, line, col, message) => {
    const e = translateError(change(from, to));
    expect([e.code, e.message, e.loc?.line, e.loc?.col]).toEqual(['ptx-reduction', message, line, col]);
  });

  it('a reduction without a type is an error at its operator', () => {
    const e = translateError(change(RED, 'bytes.add [%r6], %r1'));
    expect([e.message, e.loc?.line, e.loc?.col, e.loc?.endCol]).toEqual(['red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add: the reduction needs an element type after .add (PTX ISA §9.7.13.7)', 28, 71, 75]);
  });

  it('the CLI: file:line:col, the line and a caret under the type, exit 2 (a guarded instruction too)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-reduce-'));
    const bad = join(dir, 'bad.ptx');
    writeFileSync(bad, change(BULK, 'bulk_group.and.u32'));
    const r = await cli(['check', bad, '--cluster', '2']);
    expect(r.code).toBe(2);
    expect(r.err.replace(dir, '<dir>')).toBe([
      '<dir>/bad.ptx:33:60: error[ptx-reduction]: cp.reduce.async.bulk.and takes .b32, .b64, not .u32 (PTX ISA §9.7.9.25.4.2)',
      '  @%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group.and.u32 [%rd1], [%r3], 128;',
      '                                                             ^~~~',
    ].join('\n'));
  });
});
