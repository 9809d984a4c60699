/**
 * The reduction operator of `red.async.OP` and `cp.reduce.async.bulk….OP` (issue 12): the sketch
 * keeps it on the operation, the operation's text writes it back (and parses to the same
 * operation), and an unknown operator is an error at its columns.
 */
import { describe, expect, test } from 'vitest';
import type { Op } from '../src/kernel/ir.js';
import { formatDiagnostic, parseSketch } from '../src/lang/index.js';
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
