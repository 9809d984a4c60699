import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import {
  cudaLocation, debugString, functionIndex, functions, instructionsOf, parsePtx, printInstruction, printModule,
  type Func, type Instruction, type Module, type Operand,
} from '../src/ptx/index.js';

const FIX = join(__dirname, 'fixtures', 'ptx');
const read = (name: string) => readFileSync(join(FIX, name), 'utf8');

function parse(name: string): Module {
  const r = parsePtx(read(name), name);
  if (!r.ok) throw new Error(`${r.diagnostic.file}:${r.diagnostic.line}:${r.diagnostic.col}: ${r.diagnostic.message}`);
  return r.module;
}

function fn(m: Module, name: string): Func {
  const f = functions(m).find((x) => x.name === name);
  if (!f) throw new Error(`no function ${name}`);
  return f;
}

/** The tree without positions (what the printer cannot keep). */
function strip(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(strip);
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'pos' && k !== 'file' && k !== 'opcodeCol').map(([k, v]) => [k, strip(v)]));
  return x;
}

/** The operand shapes of an instruction: `addr(%r1+0)`, `vec(2)`, `name:%r1`. */
function shapes(i: Instruction): string[] {
  const one = (o: Operand): string => {
    switch (o.kind) {
      case 'address': return `addr(${o.base ?? ''}${o.offset ? `${o.offset > 0n ? '+' : ''}${o.offset}` : ''}${o.rest ? `;${o.rest.map(one).join(';')}` : ''})`;
      case 'vector': return `vec(${o.items.length})`;
      case 'list': return `list(${o.items.map(one).join(',')})`;
      case 'name': return o.name;
      case 'pair': return `${o.first}|${o.second}`;
      case 'sink': return '_';
      case 'int': return `int:${o.value}`;
      case 'float': return `float:${o.value}`;
      case 'expr': return 'expr';
    }
  };
  return i.operands.map(one);
}

const FILES = ['tma_pipeline.ptx', 'wgmma.ptx', 'cluster_multicast.ptx', 'tcgen05.ptx', 'calls.ptx', 'calls_debug.ptx', 'forms.ptx'];

describe('the compiled kernels parse', () => {
  test('module header, kernels and instruction counts', () => {
    const counts = Object.fromEntries(FILES.map((f) => {
      const m = parse(f);
      return [f, functions(m).filter((x) => x.body).map((x) => `${x.entry ? 'entry' : 'func'} ${instructionsOf(x).length}`)];
    }));
    expect(counts).toEqual({
      'tma_pipeline.ptx': ['entry 93', 'entry 88'],
      'wgmma.ptx': ['entry 316'],
      'cluster_multicast.ptx': ['entry 58'],
      'tcgen05.ptx': ['entry 55'],
      'calls.ptx': ['func 23', 'entry 192'],
      'forms.ptx': ['func 1', 'func 4', 'entry 24', 'entry 3'],
      'calls_debug.ptx': expect.any(Array),
    });
    expect(functions(parse('calls_debug.ptx')).reduce((n, f) => n + instructionsOf(f).length, 0)).toBe(136);
    const m = parse('tcgen05.ptx');
    expect([m.version, m.targets, m.addressSize]).toEqual(['9.0', ['sm_100a'], 64]);
    expect(parse('forms.ptx').targets).toEqual(['sm_90a', 'texmode_independent']);
  });

  test('TMA copy: tensor coordinates nested in the address, the barrier address, :: modifiers', () => {
    const ins = functions(parse('tma_pipeline.ptx')).flatMap(instructionsOf);
    const tma = ins.find((i) => i.base === 'cp' && i.mods.includes('tensor'))!;
    expect(tma.opcode).toBe('cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes');
    expect(tma.mods).toEqual(['async', 'bulk', 'tensor', '2d', 'shared::cluster', 'global', 'tile', 'mbarrier::complete_tx::bytes']);
    expect(shapes(tma)).toEqual(['addr(%r51)', 'addr(%rd9;vec(2))', 'addr(%r54)']);
    expect(tma.pos).toEqual({ file: 'tma_pipeline.ptx', line: 161, col: 2 });
    const bulk = ins.find((i) => i.opcode === 'cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes')!;
    expect(shapes(bulk)).toEqual(['addr(%r19)', 'addr(%rd10)', '%r23', 'addr(%r22)']);
    const waits = ins.filter((i) => i.opcode.startsWith('mbarrier.try_wait.parity'));
    expect(waits.map((w) => shapes(w).length)).toEqual([3, 3]);
  });

  test('wgmma: a 64-register accumulator vector, descriptors, a scope-local predicate', () => {
    const f = fn(parse('wgmma.ptx'), '_Z10wgmma_tilePf');
    const mma = instructionsOf(f).find((i) => i.base === 'wgmma' && i.mods[0] === 'mma_async')!;
    expect(shapes(mma)).toEqual(['vec(64)', '%rd2', '%rd3', 'p', 'int:1', 'int:1', 'int:0', 'int:1']);
    const idx = functionIndex(f);
    const p = idx.reg(mma, 'p');
    expect(p && 'decl' in p ? [p.decl.type, idx.scopeOf.get(mma) !== idx.root] : undefined).toEqual(['.pred', true]);
    expect(f.directives).toEqual([{ name: '.maxntid', args: [128, 1, 1], pos: expect.any(Object) }]);
    expect(['wgmma.fence.sync.aligned', 'wgmma.commit_group.sync.aligned', 'wgmma.wait_group.sync.aligned'].every((o) => instructionsOf(f).some((i) => i.opcode === o))).toBe(true);
  });

  test('tcgen05 on sm_100a: allocation, MMA, commit to an mbarrier, ld with 8 registers', () => {
    const ins = functions(parse('tcgen05.ptx')).flatMap(instructionsOf);
    const ld = ins.find((i) => i.base === 'tcgen05' && i.mods[0] === 'ld')!;
    expect(ld.mods).toEqual(['ld', 'sync', 'aligned', '32x32b', 'x8', 'b32']);
    expect(shapes(ld)).toEqual(['vec(8)', 'addr(%r19)']);
    expect(ins.map((i) => i.opcode).filter((o) => o.startsWith('tcgen05.'))).toEqual([
      'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32', 'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned',
      'tcgen05.fence::before_thread_sync', 'tcgen05.fence::after_thread_sync', 'tcgen05.mma.cta_group::1.kind::f16',
      'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64', 'tcgen05.fence::after_thread_sync',
      'tcgen05.ld.sync.aligned.32x32b.x8.b32', 'tcgen05.wait::ld.sync.aligned', 'tcgen05.fence::before_thread_sync',
      'tcgen05.dealloc.cta_group::1.sync.aligned.b32',
    ]);
  });
});

describe('scopes, labels and registers', () => {
  test('the inline-asm wait loops reuse LAB_WAIT / DONE / P1: each resolves in its own scope', () => {
    const f = fn(parse('cluster_multicast.ptx'), '_Z9multicast14CUtensorMap_stPf');
    const idx = functionIndex(f);
    const loops = idx.scopes.filter((s) => s.labels.has('LAB_WAIT'));
    expect(loops.length).toBe(2);
    expect(loops.every((s) => s.labels.has('DONE') && s.regs.has('P1') && s.parent === idx.root)).toBe(true);
    const back = instructionsOf(f).filter((i) => i.opcode === 'bra' && shapes(i)[0] === 'LAB_WAIT');
    expect(back.length).toBe(2);
    const targets = back.map((b) => idx.label(b, 'LAB_WAIT')!);
    expect(targets.map((t) => t.scope)).toEqual(loops);
    expect(targets.map((t) => t.scope.block.stmts[t.index])).toEqual(loops.map((s) => expect.objectContaining({ kind: 'label', name: 'LAB_WAIT' })));
    // The wait is the statement after the label; its guard names the scope's own P1.
    const wait = targets[1]!.scope.block.stmts[targets[1]!.index + 1] as Instruction;
    expect(wait.opcode).toBe('mbarrier.try_wait.parity.shared::cta.b64');
    expect(idx.reg(wait, 'P1')).toBe(loops[1]!.regs.get('P1'));
    // Labels of the function's own blocks are found from inside the scopes; scope labels are not found outside.
    expect(idx.label(back[0]!, '$L__BB0_2')?.scope).toBe(idx.root);
    expect(idx.label(instructionsOf(f)[0]!, 'LAB_WAIT')).toBeUndefined();
  });

  test('register ranges %r<N>, parameters, and the dual destination of elect.sync', () => {
    const m = parse('cluster_multicast.ptx');
    const f = functions(m)[0]!;
    const idx = functionIndex(f);
    const first = instructionsOf(f)[0]!;
    const r = idx.reg(first, '%r29');
    expect(r && 'decl' in r ? [r.decl.type, r.name.name, r.name.range] : r).toEqual(['.b32', '%r', 30]);
    expect(idx.reg(first, '%r30')).toBeUndefined();
    expect(idx.reg(first, '%r07')).toBeUndefined();
    expect(idx.reg(first, '%r')).toBeUndefined();
    expect(idx.reg(first, '_Z9multicast14CUtensorMap_stPf_param_0')).toMatchObject({ space: '.param', align: 128, type: '.b8', dims: [128] });
    const elect = instructionsOf(f).find((i) => i.base === 'elect')!;
    expect(shapes(elect)[0]).toBe('%rx|%px');
    expect(elect.operands[0]).toMatchObject({ kind: 'pair', first: '%rx', second: '%px' });
    const arrive = instructionsOf(f).find((i) => i.opcode === 'mbarrier.arrive.expect_tx.shared::cta.b64')!;
    expect(arrive.operands[0]!.kind).toBe('sink');
    expect(instructionsOf(f).filter((i) => i.guard).map((i) => `${i.guard!.negated ? '!' : ''}${i.guard!.pred}`)).toContain('P1');
  });
});

describe('scope rules', () => {
  const K = (params: string, body: string) => parsePtx(`.version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k(${params})\n{\n${body}\n}\n`);

  test('forward labels of an outer scope are visible inside; a label twice in one scope is recorded', () => {
    const r = K('', '\t{\n\tbra OUT;\n\t}\nOUT:\nL:\nL:\n\tret;');
    const f = r.ok ? functions(r.module)[0]! : undefined;
    const idx = functionIndex(f!);
    const bra = instructionsOf(f!)[0]!;
    expect(idx.label(bra, 'OUT')).toEqual({ scope: idx.root, index: 1 });
    expect(idx.root!.duplicates).toEqual(['L']);
    expect(idx.label(bra, 'L')?.index).toBe(2);
  });

  test('.ptr.shared.align written without spaces; a negated predicate operand', () => {
    const r = K('.param .u32 .ptr.shared.align 8 p', '\tsetp.eq.and.s32 %p1, %r1, 0, !%p2;');
    expect(r.ok && functions(r.module)[0]!.params[0]).toMatchObject({ type: '.u32', ptr: { space: '.shared', align: 8 }, name: 'p' });
    const i = r.ok ? instructionsOf(functions(r.module)[0]!)[0]! : undefined;
    expect(i?.operands[3]).toMatchObject({ kind: 'expr', expr: { kind: 'unary', op: '!', arg: { kind: 'sym', name: '%p2' } } });
  });

  test('.loc is per function: the next function starts without one', () => {
    const r = parsePtx('.version 9.0\n.target sm_90a\n.entry a()\n{\n.loc 1 5 3\nret;\n}\n.entry b()\n{\nret;\n.loc 1 9 1\nexit;\n}\n.file 1 "x.cu"\n');
    const [a, b] = r.ok ? functions(r.module).map(instructionsOf) : [];
    expect([a![0]!.loc?.line, b![0]!.loc, b![1]!.loc?.line]).toEqual([5, undefined, 9]);
    expect(r.ok && cudaLocation(r.module, b![1]!)).toEqual({ path: 'x.cu', line: 9, col: 1 });
  });
});

describe('functions, calls and data', () => {
  test('.extern .func declarations, a .func with a return value, call.uni lists, __assertfail', () => {
    const m = parse('calls.ptx');
    const assertfail = fn(m, '__assertfail');
    expect([assertfail.linkage, assertfail.body, assertfail.params.map((p) => p.type)]).toEqual([['.extern'], undefined, ['.b64', '.b64', '.b32', '.b64', '.b64']]);
    expect(fn(m, 'vprintf').returns.map((p) => [p.type, p.name])).toEqual([['.b32', 'func_retval0']]);
    const pick = fn(m, '_Z4pickii');
    expect([pick.entry, pick.linkage, pick.returns.length, pick.params.length]).toEqual([false, [], 1, 2]);
    const k = fn(m, '_Z5callsPii');
    const calls = instructionsOf(k).filter((i) => i.base === 'call');
    expect(shapes(calls[0]!)).toEqual(['list(retval0)', '_Z4pickii', 'list(param0,param1)']);
    const af = calls.find((c) => shapes(c)[0] === '__assertfail')!;
    expect(shapes(af)).toEqual(['__assertfail', 'list(param0,param1,param2,param3,param4)']);
    expect(af.mods).toEqual(['uni']);
    // Each call sequence is a scope declaring its own param0 (PTX's callseq blocks).
    const idx = functionIndex(k);
    expect(idx.scopes.filter((s) => s.regs.has('param0')).length).toBe(calls.length);
  });

  test('module variables: initializers, float bit patterns, .local depots', () => {
    const m = parse('calls.ptx');
    const decls = m.items.filter((i) => i.kind === 'decl');
    const table = decls.find((d) => d.names[0]!.name === 'table')!;
    expect([table.space, table.align, table.type, table.names[0]!.dims]).toEqual(['.const', 4, '.b8', [32]]);
    const init = table.names[0]!.init as { kind: 'list'; items: { value: bigint }[] };
    expect(init.items.length).toBe(29);
    expect(init.items.slice(0, 5).map((e) => e.value)).toEqual([1n, 0n, 0n, 0n, 2n]);
    const scale = decls.find((d) => d.names[0]!.name === 'scale')!;
    expect(scale.names[0]!.init).toEqual({ kind: 'float', value: 1.5, text: '0f3FC00000' });
    expect(decls.find((d) => d.names[0]!.name === 'dscale')!.names[0]!.init).toMatchObject({ value: 0.25 });
    const depot = fn(m, '_Z5callsPii').body!.stmts.find((s) => s.kind === 'decl' && s.space === '.local');
    expect(depot).toMatchObject({ align: 16, type: '.b8', names: [{ name: '__local_depot1', dims: [80] }] });
  });

  test('hand-written forms: header directives, prototypes, linkage, arrays, symbol arithmetic', () => {
    const m = parse('forms.ptx');
    const k = fn(m, 'k_cluster');
    expect(k.directives.map((d) => `${d.name} ${d.args.join(',')}`.trim())).toEqual(['.reqntid 128,1,1', '.explicitcluster', '.reqnctapercluster 2,1,1', '.maxnreg 168']);
    expect(k.params[0]).toMatchObject({ type: '.u64', ptr: { space: '.global', align: 16 }, name: 'k_cluster_p0' });
    expect(fn(m, 'k_small').directives.map((d) => d.name)).toEqual(['.maxntid', '.minnctapersm', '.maxclusterrank']);
    expect(fn(m, 'die').noreturn).toBe(true);
    const proto = k.body!.stmts.find((s) => s.kind === 'prototype');
    expect(proto).toMatchObject({ name: 'prot', returns: [{ type: '.b32', name: '_' }], params: [{ type: '.b32', name: '_' }] });
    const ins = instructionsOf(k);
    const byLine = (n: number) => ins.find((i) => i.pos.line === n)!;
    expect(shapes(byLine(50))).toEqual(['%rd2', 'expr']);
    expect(byLine(50).operands[1]).toMatchObject({ expr: { kind: 'binary', op: '+', left: { name: 'bar' }, right: { value: 8n } } });
    expect(shapes(byLine(51))).toEqual(['%r3', 'int:-1']);
    expect(shapes(byLine(52))).toEqual(['%r4', 'float:-1']);
    expect(shapes(byLine(53))).toEqual(['%rd3', 'float:1']);
    expect(shapes(byLine(56))).toEqual(['%r6', 'addr(%rd4-4)']);
    expect(byLine(58).guard).toEqual({ negated: true, pred: '%p1' });
    expect(shapes(byLine(59))).toEqual(['addr(scratch+12)', '%r6']);
    expect(shapes(ins.find((i) => i.base === 'call')!)).toEqual(['list(retval0)', '%rd5', 'list(param0)', 'prot']);
    expect(shapes(ins[0]!)).toEqual(['%r1', '%tid.x']);
    const items = m.items.filter((i) => i.kind === 'decl');
    expect(items.map((d) => d.linkage.join(' '))).toEqual(['.weak', '.common', '', '', '', '']);
    const grid = items.find((d) => d.names[0]!.name === 'grid')!.names[0]!;
    expect(grid.dims).toEqual([2, 3]);
    expect(strip(grid.init)).toEqual({ kind: 'list', items: [1, 2, 3, 4, 5, 6].reduce<unknown[]>((a, v, i) => {
      if (i % 3 === 0) a.push({ kind: 'list', items: [] });
      (a[a.length - 1] as { items: unknown[] }).items.push({ kind: 'int', value: BigInt(v), text: v === 6 ? '0x6' : String(v) });
      return a;
    }, []) });
    expect(items.find((d) => d.names[0]!.name === 'self_ref')!.names[0]!.init).toEqual({ kind: 'call', fn: 'generic', args: [{ kind: 'sym', name: 'grid' }] });
    expect((items.find((d) => d.names[0]!.name === 'octal_and_bin')!.names[0]!.init as { items: { value: bigint }[] }).items.map((e) => e.value)).toEqual([15n, 5n, 255n]);
    expect(debugString(m, '$L__info_string1')).toBe('twice');
    expect(debugString(m, '$L__info_string0')).toBe('k_cluster');
  });
});

describe('debug sections', () => {
  test('-G output: .debug_loc / .debug_abbrev / .debug_info / .debug_macinfo kept as labels and data', () => {
    const m = parse('calls_debug.ptx');
    const secs = m.items.filter((i) => i.kind === 'section');
    expect(secs.map((s) => s.name)).toEqual(['.debug_loc', '.debug_abbrev', '.debug_info', '.debug_macinfo']);
    const info = secs[2]!;
    const ref = info.items.find((i) => i.kind === 'data' && i.type === '.b32' && i.text === '.debug_abbrev');
    expect(ref?.pos).toEqual({ file: 'calls_debug.ptx', line: 560, col: 1 });
  });
});

describe('.loc and .file', () => {
  test('an instruction maps to its CUDA line, with the inlined-at call site', () => {
    const m = parse('tma_pipeline.ptx');
    const init = instructionsOf(functions(m)[0]!).find((i) => i.opcode === 'mbarrier.init.shared.b64')!;
    expect(init.loc).toMatchObject({ fileIndex: 2, line: 19, col: 3, functionName: { label: '$L__info_string0', offset: 0 }, inlinedAt: { fileIndex: 1, line: 26, col: 7 } });
    expect(cudaLocation(m, init)).toEqual({ path: '<cuda>/include/cccl/cuda/__ptx/instructions/generated/mbarrier_init.h', line: 19, col: 3, inlinedAt: { path: 'tma_pipeline.cu', line: 26, col: 7 } });
    expect(debugString(m, init.loc!.functionName!.label)).toMatch(/mbarrier_init/);
    const files = m.items.filter((i) => i.kind === 'file');
    expect(files[0]).toMatchObject({ index: 1, path: 'tma_pipeline.cu' });
    const calls = parse('calls.ptx');
    const first = instructionsOf(fn(calls, '_Z4pickii'));
    expect(cudaLocation(calls, first[0]!)).toEqual({ path: 'calls.cu', line: 12, col: 0 });
    expect(cudaLocation(calls, first[2]!)).toEqual({ path: 'calls.cu', line: 12, col: 42 });
  });

  test('.file with timestamp and size', () => {
    const r = parsePtx('.version 9.0\n.target sm_90a\n.file 1 "a.cu", 1700000000, 4096\n.file 2 "b.h"\n');
    expect(r.ok && r.module.items).toEqual([
      { kind: 'file', index: 1, path: 'a.cu', timestamp: 1700000000n, size: 4096n, pos: { file: '<ptx>', line: 3, col: 1 } },
      { kind: 'file', index: 2, path: 'b.h', pos: { file: '<ptx>', line: 4, col: 1 } },
    ]);
  });
});

const KERNEL = (body: string) => `.version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n${body}\n}\n`;

describe('errors', () => {
  const err = (src: string) => {
    const r = parsePtx(src, 'k.ptx');
    if (r.ok) throw new Error('parsed');
    const d = r.diagnostic;
    return `${d.line}:${d.col}-${d.endCol} ${d.code} ${d.message}`;
  };

  test('positions and what was expected', () => {
    expect(err(KERNEL('\tmov.u32 %r1, %tid.x\n\tret;'))).toBe("6:21-22 E-ptx-syntax expected ',' or ';' after the operands of 'mov.u32', found 'ret' on line 7");
    expect(err(KERNEL('\tadd.s32 %r1, %r2 %r3;'))).toBe("6:19-22 E-ptx-syntax expected ',' or ';' after the operands of 'add.s32', found '%r3'");
    expect(err(KERNEL('\tld.u32 %r1, [%rd1+];'))).toBe("6:20-21 E-ptx-syntax expected an integer offset after '+' or '-' in the address, found ']'");
    expect(err(KERNEL('\tmov.u32 %r1, #;'))).toBe("6:15-16 E-ptx-lex unexpected character '#'");
    expect(err(KERNEL('\tmov.u32 %r1, 0f3F80;'))).toBe("6:15-21 E-ptx-lex malformed float constant '0f3F80': 0f takes exactly 8 hex digits");
    expect(err(KERNEL('\t.reg .q32 %r;'))).toBe("6:7-11 E-ptx-syntax expected a type (.b32, .u64, .f32, .pred, .b8, …) in the .reg declaration, found '.q32'");
    expect(err(KERNEL('\t{\n\tret;'))).toMatch(/^9:1-2 E-ptx-syntax expected '}' to close the scope opened at line 5, found the end of the file$/);
    expect(err('.version 9.0\n.target sm_90a\nmov.u32 %r1, 1;')).toBe("3:1-4 E-ptx-syntax expected a module directive (.version, .target, .address_size, .file, .entry, .func, .global, .shared, .const, .section, …), found 'mov'");
    expect(err('.version 9.0\n.file 1 "a.cu\n')).toBe('2:9-14 E-ptx-lex unterminated string: a `"` is missing before the end of the line');
    expect(err(KERNEL('\t.rge .b32 %r1;'))).toBe("6:2-6 E-ptx-syntax expected a statement (an instruction, a label, a declaration, '{' or '}'), found '.rge'");
    expect(err('/* open')).toBe('1:1-3 E-ptx-lex unterminated comment: `/*` without `*/`');
    expect(err(KERNEL('{'.repeat(300)))).toMatch(/^6:201-202 E-ptx-limit nesting deeper than 200 levels$/);
  });

  test('a missing closer is reported at the end of its line', () => {
    expect(err(KERNEL('\tld.u32 %r1, [%rd1\n\tret;'))).toBe("6:19-20 E-ptx-syntax expected '+', '-', ',' or ']' in the address, found 'ret' on line 7");
    expect(err(KERNEL('\tcall.uni (r), f, (a, b\n\tret;'))).toBe("6:24-25 E-ptx-syntax expected ',' or ')' in the operand list, found 'ret' on line 7");
  });

  test('CRLF line ends and a byte-order mark: the same tree, the same lines', () => {
    const src = read('cluster_multicast.ptx');
    const a = parsePtx(src, 'x');
    const b = parsePtx(`\uFEFF${src.replace(/\n/g, '\r\n')}`, 'x');
    const lines = (r: typeof a) => (r.ok ? functions(r.module).flatMap(instructionsOf).map((i) => i.pos.line) : []);
    expect(lines(b)).toEqual(lines(a));
    expect(strip(b.ok && b.module)).toEqual(strip(a.ok && a.module));
  });

  test('unknown opcodes are instructions, not errors', () => {
    const r = parsePtx(KERNEL('\tfrobnicate.x.y::z.v4 {%r1, _}, [%rd1+16], 0x10, 017;'));
    expect(r.ok).toBe(true);
    const i = r.ok ? instructionsOf(functions(r.module)[0]!)[0]! : undefined;
    expect(i && [i.base, i.mods, shapes(i)]).toEqual(['frobnicate', ['x', 'y::z', 'v4'], ['vec(2)', 'addr(%rd1+16)', 'int:16', 'int:15']]);
  });
});

describe('properties', () => {
  test('printing a module and parsing it again gives the same tree (every fixture)', () => {
    for (const f of FILES) {
      const a = parse(f);
      const b = parsePtx(printModule(a), 'printed');
      expect(b.ok, f).toBe(true);
      expect(strip(b.ok && b.module), f).toEqual(strip(a));
    }
  });

  const reg = fc.constantFrom('%r1', '%rd12', '%p3', 'P1', '%tid.x', '%cluster_ctarank', 'param0');
  const imm = fc.oneof(fc.integer({ min: -1000, max: 1 << 30 }).map(String), fc.constantFrom('0x7fffffff', '0f3F800000', '0d3FF0000000000000', '017', '1.5'));
  const operand: fc.Arbitrary<string> = fc.oneof(
    reg, imm, fc.constant('_'),
    fc.tuple(reg, reg).map(([a, b]) => `${a}|${b}`),
    fc.tuple(reg, fc.integer({ min: -64, max: 4096 })).map(([r, o]) => (o === 0 ? `[${r}]` : `[${r}+${o}]`)),
    fc.array(fc.oneof(reg, imm), { minLength: 1, maxLength: 130 }).map((xs) => `{${xs.join(', ')}}`),
    fc.tuple(reg, fc.array(reg, { minLength: 1, maxLength: 5 })).map(([r, cs]) => `[${r}, {${cs.join(', ')}}]`),
  );
  const word = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}(::[a-z0-9_]{1,6})?$/);
  const instr = fc.tuple(fc.option(fc.tuple(fc.boolean(), fc.constantFrom('%p1', 'P1', '%p12'))), fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.array(word, { maxLength: 6 }), fc.array(operand, { maxLength: 6 }))
    .map(([g, base, mods, ops]) => `${g ? `@${g[0] ? '!' : ''}${g[1]} ` : ''}${[base, ...mods].join('.')}${ops.length ? ` ${ops.join(', ')}` : ''};`);

  test('random instructions parse, print and parse again to the same tree', () => {
    fc.assert(fc.property(fc.array(instr, { minLength: 1, maxLength: 8 }), (lines) => {
      const r = parsePtx(KERNEL(lines.join('\n')));
      if (!r.ok) return false;
      const ins = instructionsOf(functions(r.module)[0]!);
      const again = parsePtx(KERNEL(ins.map(printInstruction).join('\n')));
      return ins.length === lines.length && again.ok && JSON.stringify(strip(instructionsOf(functions(again.module)[0]!)), (_, v) => (typeof v === 'bigint' ? `${v}n` : v)) === JSON.stringify(strip(ins), (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
    }), { numRuns: 300 });
  });

  test('random insertions into a real kernel never throw; errors are positioned inside the text', () => {
    const src = read('cluster_multicast.ptx');
    const junk = fc.constantFrom('{', '}', ';', ',', '[', ']', '(', ')', '@', '|', '.reg', '%r1', '0x', '0f12', '"', '/*', '::', '<', '>', '=', '\u0007', 'é', '.b32', 'LAB:', '-');
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: src.length }), junk), { minLength: 1, maxLength: 4 }), (edits) => {
      let s = src;
      for (const [at, j] of [...edits].sort((a, b) => b[0] - a[0])) s = s.slice(0, at) + j + s.slice(at);
      const r = parsePtx(s, 'x.ptx');
      if (r.ok) return true;
      const lines = s.split(/\r\n|\r|\n/);
      const d = r.diagnostic;
      return d.line >= 1 && d.line <= lines.length && d.col >= 1 && d.col <= lines[d.line - 1]!.length + 1 && d.endCol > d.col && d.message.length > 0;
    }), { numRuns: 300 });
  });
});

describe('mbsim info', () => {
  async function run(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  test('prints the kernels, their header directives, parameters and instruction counts', async () => {
    const r = await run(['info', join(FIX, 'forms.ptx')]);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe(`${join(FIX, 'forms.ptx')}: PTX 8.7, target sm_90a, texmode_independent, 64-bit addresses`);
    expect(lines.slice(1)).toEqual([
      '2 kernels, 2 functions defined, 1 declared; 32 instructions',
      'func ext_fn .extern (declared)',
      'func die: 1 instruction, 1 distinct opcode, 0 labels, 0 nested scopes',
      'func twice .visible: 4 instructions, 4 distinct opcodes, 0 labels, 0 nested scopes',
      '  returns .param .b32 ret',
      '  param .param .b32 x',
      'entry k_cluster .visible: 24 instructions, 14 distinct opcodes, 5 labels, 3 nested scopes',
      '  .reqntid 128, 1, 1',
      '  .explicitcluster',
      '  .reqnctapercluster 2, 1, 1',
      '  .maxnreg 168',
      '  param .param .u64 .ptr .global .align 16 k_cluster_p0 (--param 0)',
      '  param .param .align 128 .b8 k_cluster_tmap[128] (--param 1)',
      'entry k_small .visible: 3 instructions, 3 distinct opcodes, 0 labels, 0 nested scopes',
      '  .maxntid 256',
      '  .minnctapersm 2',
      '  .maxclusterrank 8',
    ]);
  });

  test('a syntax error: exit 2 with file:line:col, the line and a caret; a missing file: exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-ptx-'));
    const f = join(dir, 'bad.ptx');
    writeFileSync(f, KERNEL('\tmov.u32 %r1, %tid.x\n\tret;'));
    const r = await run(['info', f]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe([
      `${f}:6:21: error[E-ptx-syntax]: expected ',' or ';' after the operands of 'mov.u32', found 'ret' on line 7`,
      '  \tmov.u32 %r1, %tid.x',
      '  \t                   ^',
    ].join('\n'));
    const missing = await run(['info', join(dir, 'nope.ptx')]);
    expect([missing.code, missing.err]).toEqual([2, `mbsim: error: cannot read PTX file ${join(dir, 'nope.ptx')}: no such file`]);
  });
});
