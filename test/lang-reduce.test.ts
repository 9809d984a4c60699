/**
 * The reduction operator and type of `red.async.OP.TYPE` and `cp.reduce.async.bulk….OP.TYPE`
 * (issue 12; PTX ISA §9.7.13.7, §9.7.9.25.4.2): the sketch keeps them on the operation, the
 * operation's text writes them back (and parses to the same operation), and an unknown operator or
 * a type the operator does not take is an error at its columns.
 */
import { describe, expect, test } from 'vitest';
import type { Op } from '../src/kernel/ir.js';
import { formatDiagnostic, parseSketch } from '../src/lang/index.js';
import { kernel } from '../src/kernel/builder.js';
import { opText } from '../src/machine/optext.js';

const sketch = (line: string) => `kernel q arch=sm_90a cluster=2
smem tile[2] bytes=64
barrier full[2] count=1
role r warps=1 per=one:
    ${line}
`;

/** The one operation of a sketch whose role is `line`. */
function opOf(line: string): Op {
  const r = parseSketch(sketch(line), 'q.mbk');
  expect(r.diagnostics.map((d) => d.message)).toEqual([]);
  const st = r.kernel!.roles[0]!.body[0]!;
  if (st.s !== 'op') throw new Error(`not an operation: ${line}`);
  return st.op;
}

describe('reduction operators', () => {
  test.each([
    ['red.async.add tile[0]@1, 4, full[0]@1', 'add', 'red.async.add tile[0]@1, 4, full[0]@1'],
    ['red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.xor tile[0]@1, 4, full[0]@1', 'xor', 'red.async.xor tile[0]@1, 4, full[0]@1'],
    ['cp.reduce.async.bulk.min tile[0], 64', 'min', 'cp.reduce.async.bulk.min tile[0], 64'],
    ['cp.reduce.async.bulk.global.shared::cta.bulk_group.inc tile[1], 64', 'inc', 'cp.reduce.async.bulk.inc tile[1], 64'],
    ['cp.reduce.async.bulk.tensor.or tile[0], 64', 'or', 'cp.reduce.async.bulk.tensor.or tile[0], 64'],
  ])('%s keeps .%s; its text %s parses back to the same operation', (line, redop, text) => {
    const op = opOf(line);
    expect(op).toMatchObject({ redop });
    expect(opText(op)).toBe(text);
    expect(opOf(text)).toEqual(op);
  });

  test('without an operator there is none on the operation or in its text', () => {
    const op = opOf('red.async tile[0]@1, 4, full[0]@1');
    expect('redop' in op).toBe(false);
    expect(opText(op)).toBe('red.async tile[0]@1, 4, full[0]@1');
    expect(opText(opOf('cp.reduce.async.bulk.tensor tile[0], 64'))).toBe('cp.reduce.async.bulk.tensor tile[0], 64');
  });

  test('an unknown operator is E-unknown-mnemonic with its caret', () => {
    const src = sketch('red.async.mul tile[0]@1, 4, full[0]@1');
    const r = parseSketch(src, 'q.mbk');
    expect(r.kernel).toBeUndefined();
    expect(r.diagnostics.map((d) => formatDiagnostic(d, src)).join('\n')).toMatchInlineSnapshot(`
      "q.mbk:5:14: error[E-unknown-mnemonic]: red.async.mul is not a valid spelling of red.async
            red.async.mul tile[0]@1, 4, full[0]@1
                     ^~~~
      hint: unknown reduction operator .mul: red.async takes .add, .min, .max, .inc, .dec, .and, .or, .xor (PTX ISA §9.7.13.7)"
    `);
    const bulk = sketch('cp.reduce.async.bulk.global.shared::cta.bulk_group.sub tile[0], 64');
    expect(parseSketch(bulk, 'q.mbk').diagnostics.map((d) => [d.line, d.col, d.hint])).toEqual([
      [5, 55, 'unknown reduction operator .sub: cp.reduce.async.bulk takes .add, .min, .max, .inc, .dec, .and, .or, .xor (PTX ISA §9.7.9.25.4.2)'],
    ]);
  });

  test('a partial qualifier chain is an unknown operation, not an unknown operator', () => {
    const r = parseSketch(sketch('red.async.relaxed tile[0]@1, 4, full[0]@1'), 'q.mbk');
    expect(r.diagnostics.map((d) => [d.code, d.message])).toEqual([['E-unknown-mnemonic', "unknown operation 'red.async.relaxed'"]]);
  });
});

describe('reduction types', () => {
  test.each([
    ['red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 tile[0]@1, 4, full[0]@1', 'add', 'u32', 'red.async.add.u32 tile[0]@1, 4, full[0]@1'],
    ['red.async.add.u64 tile[0]@1, 8, full[0]@1', 'add', 'u64', 'red.async.add.u64 tile[0]@1, 8, full[0]@1'],
    ['red.async.add.s64 tile[0]@1, 8, full[0]@1', 'add', 's64', 'red.async.add.s64 tile[0]@1, 8, full[0]@1'],
    ['red.async.min.s32 tile[0]@1, 4, full[0]@1', 'min', 's32', 'red.async.min.s32 tile[0]@1, 4, full[0]@1'],
    ['red.async.inc.u32 tile[0]@1, 4, full[0]@1', 'inc', 'u32', 'red.async.inc.u32 tile[0]@1, 4, full[0]@1'],
    ['red.async.xor.b32 tile[0]@1, 4, full[0]@1', 'xor', 'b32', 'red.async.xor.b32 tile[0]@1, 4, full[0]@1'],
    ['cp.reduce.async.bulk.global.shared::cta.bulk_group.max.s64 tile[0], 64', 'max', 's64', 'cp.reduce.async.bulk.max.s64 tile[0], 64'],
    ['cp.reduce.async.bulk.and.b64 tile[0], 64', 'and', 'b64', 'cp.reduce.async.bulk.and.b64 tile[0], 64'],
    ['cp.reduce.async.bulk.add.f32 tile[0], 64', 'add', 'f32', 'cp.reduce.async.bulk.add.f32 tile[0], 64'],
    ['cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 tile[0], 64', 'add', 'bf16', 'cp.reduce.async.bulk.add.noftz.bf16 tile[0], 64'],
  ])('%s keeps .%s.%s; its text %s parses back to the same operation', (line, redop, redType, text) => {
    const op = opOf(line);
    expect(op).toMatchObject({ redop, redType });
    expect(opText(op)).toBe(text);
    expect(opOf(text)).toEqual(op);
  });

  test('a type the operator does not take is E-unknown-mnemonic with the caret under the type', () => {
    const src = sketch('red.async.add.b32 tile[0]@1, 4, full[0]@1');
    const r = parseSketch(src, 'q.mbk');
    expect(r.kernel).toBeUndefined();
    expect(r.diagnostics.map((d) => formatDiagnostic(d, src)).join('\n')).toMatchInlineSnapshot(`
      "q.mbk:5:18: error[E-unknown-mnemonic]: red.async.add.b32 is not a valid spelling of red.async
            red.async.add.b32 tile[0]@1, 4, full[0]@1
                         ^~~~
      hint: red.async.add takes .u32, .s32, .u64, .s64, not .b32 (PTX ISA §9.7.13.7)"
    `);
  });

  test.each([
    ['red.async.and.u32 tile[0]@1, 4, full[0]@1', 18, 'red.async.and takes .b32, not .u32 (PTX ISA §9.7.13.7)'],
    ['red.async.add.b64 tile[0]@1, 8, full[0]@1', 18, 'red.async.add takes .u32, .s32, .u64, .s64, not .b64 (PTX ISA §9.7.13.7)'],
    ['red.async.max.u64 tile[0]@1, 8, full[0]@1', 18, 'red.async.max takes .u32, .s32, not .u64 (PTX ISA §9.7.13.7)'],
    ['cp.reduce.async.bulk.add.noftz.f32 tile[0], 64', 35, '.noftz is only for .add of .f16 and .bf16, not .add.f32 (PTX ISA §9.7.9.25.4.2)'],
    ['cp.reduce.async.bulk.min.noftz.f16 tile[0], 64', 35, '.noftz is only for .add of .f16 and .bf16, not .min.f16 (PTX ISA §9.7.9.25.4.2)'],
    ['red.async.inc.s32 tile[0]@1, 4, full[0]@1', 18, 'red.async.inc takes .u32, not .s32 (PTX ISA §9.7.13.7)'],
    ['red.async.min.u16 tile[0]@1, 4, full[0]@1', 18, 'unknown type .u16: red.async.min takes .u32, .s32 (PTX ISA §9.7.13.7)'],
    ['red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.max.b32 tile[0]@1, 4, full[0]@1', 79, 'red.async.max takes .u32, .s32, not .b32 (PTX ISA §9.7.13.7)'],
    ['cp.reduce.async.bulk.inc.u64 tile[0], 64', 29, 'cp.reduce.async.bulk.inc takes .u32, not .u64 (PTX ISA §9.7.9.25.4.2)'],
    ['cp.reduce.async.bulk.min.f32 tile[0], 64', 29, 'cp.reduce.async.bulk.min takes .u32, .s32, .u64, .s64, .f16, .bf16, not .f32 (PTX ISA §9.7.9.25.4.2)'],
    ['cp.reduce.async.bulk.add.f16 tile[0], 64', 29, 'cp.reduce.async.bulk.add.f16 needs .noftz: write .add.noftz.f16 (PTX ISA §9.7.9.25.4.2)'],
    ['cp.reduce.async.bulk.add.noftz.u32 tile[0], 64', 35, '.noftz is only for .add of .f16 and .bf16, not .add.u32 (PTX ISA §9.7.9.25.4.2)'],
    ['cp.reduce.async.bulk.tensor.add.u32 tile[0], 64', 36, 'cp.reduce.async.bulk.tensor takes no element type: its tensor map gives it (PTX ISA §9.7.9.27.1.3)'],
    ['red.async.add.u32.u32 tile[0]@1, 4, full[0]@1', 18, 'red.async.add.u32.u32: one type follows the operator (PTX ISA §9.7.13.7)'],
    ['red.async.mul.u32 tile[0]@1, 4, full[0]@1', 14, 'unknown reduction operator .mul: red.async takes .add, .min, .max, .inc, .dec, .and, .or, .xor (PTX ISA §9.7.13.7)'],
  ])('%s: at column %i, %s', (line, col, hint) => {
    const r = parseSketch(sketch(line), 'q.mbk');
    expect(r.diagnostics.map((d) => [d.code, d.line, d.col, d.hint])).toEqual([['E-unknown-mnemonic', 5, col, hint]]);
  });

  test('the builder keeps and checks the type as the sketch does', () => {
    const k = kernel('b', { cluster: 2 }).smem('t', 2, 64).barriers('f', 2, { count: 1 });
    k.role('r', { warps: 1, per: 'one' }, (r) => r.stAsync('t[0]@1', 4, 'f[0]@1', { red: true, redop: 'min', redType: 's32' }).bulkReduce('t[0]', 64, { redop: 'add', redType: 'bf16' }));
    const [a, b] = k.build().roles[0]!.body.map((s) => (s.s === 'op' ? opText(s.op) : ''));
    expect([a, b]).toEqual(['red.async.min.s32 t[0]@1, 4, f[0]@1', 'cp.reduce.async.bulk.add.noftz.bf16 t[0], 64']);
    const bad = (f: () => unknown) => { try { f(); return ''; } catch (e) { return (e as Error).message; } };
    const r0 = () => kernel('b', { cluster: 2 }).smem('t', 2, 64).barriers('f', 2, { count: 1 });
    expect(bad(() => r0().role('r', { warps: 1 }, (r) => r.stAsync('t[0]@1', 4, 'f[0]@1', { red: true, redop: 'and', redType: 'u32' })))).toBe('stAsync: red.async.and takes .b32, not .u32 (PTX ISA §9.7.13.7)');
    expect(bad(() => r0().role('r', { warps: 1 }, (r) => r.bulkReduce('t[0]', 64, { redType: 'u32' })))).toBe('bulkReduce: redType needs redop (the PTX type suffix follows the operator: .add.u32)');
    expect(bad(() => r0().role('r', { warps: 1 }, (r) => r.bulkReduce('t[0]', 64, { tensor: true, redop: 'add', redType: 'u32' })))).toBe('bulkReduce: cp.reduce.async.bulk.tensor takes no element type: its tensor map gives it (PTX ISA §9.7.9.27.1.3)');
  });
});
