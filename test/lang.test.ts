/**
 * The sketch language: diagnostics (every code, with its exact message, caret and hint), layout
 * (INDENT/DEDENT edge cases), the IR each construct produces, and source locations.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import type { BarRef, Expr, Kernel, Op, Stmt } from '../src/kernel/ir.js';
import { formatDiagnostic, OPS, parseSketch, SKETCH_CODES } from '../src/lang/index.js';
import { lex } from '../src/lang/lexer.js';

/** Every diagnostic of `src`, formatted. */
function errors(src: string): string {
  const r = parseSketch(src, 't.mbk');
  return r.diagnostics.map((d) => formatDiagnostic(d, src)).join('\n');
}

function kernelOf(src: string): Kernel {
  const r = parseSketch(src, 't.mbk');
  if (!r.kernel) throw new Error(errors(src));
  return r.kernel;
}

/** Deep copy without locations. */
function strip<T>(x: T): T {
  return JSON.parse(JSON.stringify(x, (k, v) => (k === 'loc' || k === 'file' ? undefined : v)));
}

const HEAD = 'kernel k arch=sm_90a\nparam S = 2\nbarrier full[S] count=1\nsmem tile[S] bytes=1024\n';
const B_HEAD = 'kernel k arch=sm_100a\nparam S = 2\nbarrier full[S] count=1\nsmem tile[S] bytes=1024\ntmem acc[1] bytes=4096\n';
/** A role body (indented by 4) after HEAD. */
const role = (body: string, head = HEAD) => `${head}role p warps=1:\n${body.replace(/^/gm, '    ')}\n`;
/** The ops of a one-role sketch. */
function opsOf(body: string, head = B_HEAD): Op[] {
  const k = kernelOf(role(body, head));
  return strip(k.roles[0]!.body).map((s) => (s as Extract<Stmt, { s: 'op' }>).op);
}

describe('diagnostics: one test per code, exact message and caret', () => {
  test('E-bad-char', () => {
    expect(errors(role('x = 1 $ 2'))).toMatchInlineSnapshot(`
      "t.mbk:6:11: error[E-bad-char]: unexpected character "$"
            x = 1 $ 2
                  ^
      hint: the sketch language uses ASCII names, numbers and the operators of C; comments start with #
      t.mbk:6:13: error[E-syntax]: expected the end of the line but found '2'
            x = 1 $ 2
                    ^
      hint: one statement per line; separate operands with commas"
    `);
  });
  test('E-bad-char: a non-ASCII letter in a name is one error at that letter, naming it by code point', () => {
    expect(errors(`${HEAD}role cönsümer warps=1 per=one:\n    exit\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:7: error[E-bad-char]: U+00F6 'ö' is not allowed in a name ('cönsümer')
        role cönsümer warps=1 per=one:
              ^
      hint: a name is ASCII letters, digits and _, and starts with a letter or _; did you mean 'consumer'?"
    `);
    expect(errors(`${HEAD}barrier fülł[1] count=1\nrole p warps=1:\n    mbarrier.arrive fülł[0]\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:10: error[E-bad-char]: U+00FC 'ü' is not allowed in a name ('fülł')
        barrier fülł[1] count=1
                 ^
      hint: a name is ASCII letters, digits and _, and starts with a letter or _"
    `);
    // A combining accent after an ASCII letter belongs to the name too.
    expect(parseSketch(`${HEAD}role pe\u0301 warps=1:\n    exit\n`, 't.mbk').diagnostics.map((d) => [d.code, d.line, d.col, d.message]))
      .toEqual([['E-bad-char', 5, 8, "U+0301 '\u0301' is not allowed in a name ('pe\u0301')"]]);
  });
  test('E-bad-char: a binary file (a NUL character) is one error at its first NUL, not one per run of bytes', () => {
    // The first bytes of an ELF executable, then more lines of binary.
    const elf = '\u007fELF\u0002\u0001\u0001\u0000\u0000\u0000\u0003>\n\u0000@\u0000\u001f\r\nkernel k\n';
    const r = parseSketch(elf, 'a.out.mbk');
    expect(r.kernel).toBeUndefined();
    expect(r.diagnostics.map((d) => [d.code, d.line, d.col, d.endCol, d.message])).toEqual([
      ['E-bad-char', 1, 8, 9, 'a NUL character (U+0000): this is a binary file, not the text of a sketch'],
    ]);
    expect(r.diagnostics[0]!.hint).toContain('UTF-8 text file');
    // Its position counts CRLF and CR line breaks as one each.
    expect(parseSketch(`${HEAD}\r\n# a\rrole p warps=1:\r\n    ex\u0000it\n`, 't.mbk').diagnostics.map((d) => [d.line, d.col]))
      .toEqual([[HEAD.split('\n').length + 3, 7]]);
  });
  test('unicode in comments and strings is accepted', () => {
    const k = kernelOf(`# ünïcode — ✓ 名前\nkernel k arch=sm_90a description="naïve ✓ 名前"\nbarrier full[1] count=1  # fülł\nrole p warps=1:\n    exit  # ö\n`);
    expect(k.description).toBe('naïve ✓ 名前');
    expect(k.roles.map((r) => r.name)).toEqual(['p']);
  });
  test('E-bad-char: unterminated string', () => {
    expect(errors('kernel k description="abc\nrole p:\n    exit\n')).toMatchInlineSnapshot(`
      "t.mbk:1:22: error[E-bad-char]: unterminated string
        kernel k description="abc
                             ^~~~
      hint: close the string with " on the same line"
    `);
  });
  test('E-mixed-indent: tabs and spaces in one line', () => {
    expect(errors(`${HEAD}role p warps=1:\n \texit\n`)).toMatchInlineSnapshot(`
      "t.mbk:6:1: error[E-mixed-indent]: indentation mixes tabs and spaces
         	exit
        ^~
      hint: indent with spaces only (or tabs only) throughout the file"
    `);
  });
  test('E-mixed-indent: tabs on one line, spaces on another', () => {
    expect(errors(`${HEAD}role p warps=1:\n\tif 1:\n        exit\n`)).toMatchInlineSnapshot(`
      "t.mbk:7:1: error[E-mixed-indent]: this line is indented with spaces but line 6 with tabs
                exit
        ^~~~~~~~
      hint: indent with spaces only (or tabs only) throughout the file"
    `);
  });
  test('E-mixed-indent: one diagnostic for one cause (no dedent error after it)', () => {
    const src = `${HEAD}role p warps=1 per=one:\n    mbarrier.arrive full[0]\n\tmbarrier.arrive full[1]\n`;
    expect(parseSketch(src, 't.mbk').diagnostics.map((d) => `${d.code} ${d.line}:${d.col}`)).toEqual(['E-mixed-indent 7:1']);
  });
  test('E-unexpected-indent', () => {
    expect(errors(role('exit\n  exit'))).toMatchInlineSnapshot(`
      "t.mbk:7:1: error[E-unexpected-indent]: unexpected indentation
              exit
        ^~~~~~
      hint: only the statements of a block (after a line ending with ':') are indented deeper"
    `);
  });
  test('E-bad-dedent', () => {
    expect(errors(role('if 1:\n    exit\n  exit'))).toMatchInlineSnapshot(`
      "t.mbk:8:1: error[E-bad-dedent]: this line does not match the indentation of any enclosing block
              exit
        ^~~~~~
      hint: indent it like the enclosing block (4 columns) or like a statement of the block it belongs to"
    `);
  });
  test('E-expected-indent', () => {
    expect(errors(role('if 1:\nexit'))).toMatchInlineSnapshot(`
      "t.mbk:6:1: error[E-expected-indent]: expected an indented block after this line
            if 1:
        ^~~~~~~~~
      hint: indent the block's statements deeper than the line ending with ':' (use 'pass' for an empty block)"
    `);
  });
  test('E-expected-indent at the end of the file', () => {
    expect(errors(`${HEAD}role p warps=1:`)).toMatchInlineSnapshot(`
      "t.mbk:5:1: error[E-expected-indent]: expected an indented block after this line
        role p warps=1:
        ^~~~~~~~~~~~~~~
      hint: indent the block's statements deeper than the line ending with ':' (use 'pass' for an empty block)"
    `);
  });
  test('E-syntax: missing colon (only one error, the block still parses)', () => {
    expect(errors(role('for i in range(0, 4)\n    exit'))).toMatchInlineSnapshot(`
      "t.mbk:6:25: error[E-syntax]: expected ':' but found the end of the line
            for i in range(0, 4)
                                ^
      hint: block headers (role, for, if, elif, else, elect) end with ':'"
    `);
  });
  test('E-syntax: incomplete expression', () => {
    expect(errors(role('x = 1 +\ny = 2'))).toMatchInlineSnapshot(`
      "t.mbk:6:12: error[E-syntax]: expected an expression but found the end of the line
            x = 1 +
                   ^
      hint: expressions are integers, names, name[index] references and C operators with parentheses"
    `);
  });
  test('E-syntax: else without if', () => {
    expect(errors(role('else:\n    exit'))).toMatchInlineSnapshot(`
      "t.mbk:6:5: error[E-syntax]: expected the end of the block but found 'else'
            else:
            ^~~~
      hint: 'else' must follow an 'if' block, at the indentation of its 'if'"
    `);
  });
  test('E-syntax: operands without commas', () => {
    expect(errors(role('work 5 6'))).toMatchInlineSnapshot(`
      "t.mbk:6:12: error[E-syntax]: expected the end of the line but found '6'
            work 5 6
                   ^
      hint: one statement per line; separate operands with commas"
    `);
  });
  test('E-syntax: statement outside a role', () => {
    expect(errors(`${HEAD}mbarrier.arrive full[0]\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:1: error[E-syntax]: statements belong inside a role
        mbarrier.arrive full[0]
        ^~~~~~~~~~~~~~~~~~~~~~~
      hint: indent it under a line such as 'role producer warps=1 per=one:'"
    `);
  });
  test('E-limit: nesting deeper than the limits is one diagnostic where the limit is crossed, not a crash', () => {
    const deep = role(`x = ${'('.repeat(20000)}1${')'.repeat(20000)}`);
    const r = parseSketch(deep, 't.mbk');
    expect(r.kernel).toBeUndefined();
    // The 33rd '(' of line 6 (the role body is indented 4; 'x = ' takes 4 more).
    expect(r.diagnostics.map((d) => `${d.code} ${d.line}:${d.col} ${d.message}`)).toEqual([
      'E-limit 6:41 this expression is nested deeper than the limit of 32 levels (parentheses, brackets and prefix operators)',
    ]);
    const ok = role(`x = ${'('.repeat(32)}1${')'.repeat(32)}\n${Array.from({ length: 30 }, (_, i) => `${'    '.repeat(i)}if 1:`).join('\n')}\n${'    '.repeat(30)}exit`);
    expect(errors(ok)).toBe('');
  });
  test('E-arith: literals and constant expressions without an exact value, with the cause', () => {
    expect(errors('kernel k\nparam N = 9007199254740991 + 1\nparam M = 99999999999999999999\nbarrier b count=1 << 70\nrole p:\n    x = 0x20000000000001\n')).toBe([
      't.mbk:2:11: error[E-arith]: the default of parameter N: integer overflow: 9007199254740991 + 1 exceeds 2^53 − 1',
      '  param N = 9007199254740991 + 1',
      '            ^~~~~~~~~~~~~~~~~~~~',
      'hint: mbsim computes exactly with integers up to ±(2^53 − 1) = ±9007199254740991',
      't.mbk:3:11: error[E-arith]: integer 99999999999999999999 is outside the exact range ±(2^53 − 1)',
      '  param M = 99999999999999999999',
      '            ^~~~~~~~~~~~~~~~~~~~',
      'hint: mbsim computes exactly with integers up to ±(2^53 − 1) = ±9007199254740991',
      't.mbk:4:17: error[E-arith]: shift count 70 out of range 0..63 in 1 << 70',
      '  barrier b count=1 << 70',
      '                  ^~~~~~~',
      'hint: shift counts are 0..63 (64-bit integers)',
      't.mbk:6:9: error[E-arith]: integer 0x20000000000001 is outside the exact range ±(2^53 − 1)',
      '      x = 0x20000000000001',
      '          ^~~~~~~~~~~~~~~~',
      'hint: mbsim computes exactly with integers up to ±(2^53 − 1) = ±9007199254740991',
    ].join('\n'));
  });
  test('a parameter whose default is refused is still declared: its uses are no knock-on unknown name', () => {
    const src = 'kernel k\nparam N = 99999999999999999999\nparam M = 9007199254740991 + 1\nbarrier b[N] count=M\nrole p:\n    for i in range(N):\n        mbarrier.arrive b[0]\n';
    const diags = parseSketch(src, 't.mbk').diagnostics;
    expect(diags.map((d) => [d.code, d.line])).toEqual([['E-arith', 2], ['E-arith', 3]]);
    // An undeclared name is still one.
    expect(parseSketch(src.replace('range(N)', 'range(Q)'), 't.mbk').diagnostics.map((d) => d.code)).toEqual(['E-arith', 'E-arith', 'E-unknown-name']);
  });
  test('E-missing-kernel', () => {
    expect(errors('param S = 2\nrole p warps=1:\n    exit\n')).toMatchInlineSnapshot(`
      "t.mbk:1:1: error[E-missing-kernel]: the sketch has no kernel declaration
        param S = 2
        ^
      hint: start the file with a line such as 'kernel NAME arch=sm_100a cluster=1'"
    `);
  });
  test('E-duplicate: declarations, roles, options, kernels, builtins', () => {
    expect(errors(`${HEAD}kernel k2\nsmem full[1] bytes=4\nbarrier cta[1] count=1\nrole p warps=1 warps=2:\n    exit\nrole p:\n    exit\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:1: error[E-duplicate]: a second kernel declaration (the first is on line 1)
        kernel k2
        ^~~~~~~~~
      hint: a sketch file describes one kernel
      t.mbk:6:6: error[E-duplicate]: 'full' is already declared (line 3)
        smem full[1] bytes=4
             ^~~~
      hint: rename this buffer array or remove one of the declarations
      t.mbk:7:9: error[E-duplicate]: 'cta' is a builtin name and cannot be declared
        barrier cta[1] count=1
                ^~~
      hint: builtins: cta, instance, ncta, clusterid, nthreads, nwarps, warp, warpgroup; choose another name
      t.mbk:8:16: error[E-duplicate]: option 'warps' is given twice
        role p warps=1 warps=2:
                       ^~~~~
      hint: give each option once
      t.mbk:10:6: error[E-duplicate]: role 'p' is already declared (line 8)
        role p:
             ^
      hint: give each role its own name (use instances=N for several copies)"
    `);
  });
  test('E-unknown-name: variables, with did-you-mean', () => {
    expect(errors(role('stage = 1\nx = stag + y'))).toMatchInlineSnapshot(`
      "t.mbk:7:9: error[E-unknown-name]: unknown name 'stag'
            x = stag + y
                ^~~~
      hint: did you mean 'stage'?
      t.mbk:7:16: error[E-unknown-name]: unknown name 'y'
            x = stag + y
                       ^
      hint: role p can read parameters, builtins (cta, instance, ncta, clusterid, nthreads, nwarps, warp, warpgroup) and variables assigned before this line"
    `);
  });
  test('E-unknown-name: barriers, buffers, tokens, names outside their context', () => {
    expect(errors(`${HEAD}barrier b[1] count=cta\nrole p warps=1:\n    mbarrier.arrive ful[0]\n    ld.shared tiles[0]\n    mbarrier.try_wait full[0], tok\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:20: error[E-unknown-name]: 'cta' cannot be used in the init count of b
        barrier b[1] count=cta
                           ^~~
      hint: only parameters and ncta may appear here
      t.mbk:7:21: error[E-unknown-name]: unknown barrier 'ful'
            mbarrier.arrive ful[0]
                            ^~~~~~
      hint: did you mean 'full'?
      t.mbk:8:15: error[E-unknown-name]: unknown buffer 'tiles'
            ld.shared tiles[0]
                      ^~~~~~~~
      hint: did you mean 'tile'?
      t.mbk:9:32: error[E-unknown-name]: unknown token variable 'tok'
            mbarrier.try_wait full[0], tok
                                       ^~~
      hint: assign it first: tok = mbarrier.arrive BAR"
    `);
  });
  test('E-unknown-mnemonic with a did-you-mean hint', () => {
    expect(errors(role('mbarrier.arive full[0]\nmbarrier.frobnicate full[0]\nwrok 5'))).toMatchInlineSnapshot(`
      "t.mbk:6:5: error[E-unknown-mnemonic]: unknown operation 'mbarrier.arive'
            mbarrier.arive full[0]
            ^~~~~~~~~~~~~~
      hint: did you mean 'mbarrier.arrive'?
      t.mbk:7:5: error[E-unknown-mnemonic]: unknown operation 'mbarrier.frobnicate'
            mbarrier.frobnicate full[0]
            ^~~~~~~~~~~~~~~~~~~
      hint: operations are written with their PTX mnemonics; docs/LANGUAGE.md lists them
      t.mbk:8:5: error[E-unknown-mnemonic]: unknown operation 'wrok'
            wrok 5
            ^~~~
      hint: operations are written with their PTX mnemonics; docs/LANGUAGE.md lists them"
    `);
  });
  test('E-operand-count: too many and too few', () => {
    expect(errors(role('mbarrier.arrive full[0], 1, 2\nmbarrier.arrive.expect_tx full[0]\nfence.proxy.async 1'))).toMatchInlineSnapshot(`
      "t.mbk:6:33: error[E-operand-count]: mbarrier.arrive takes 1 to 2 operands but 3 were given
            mbarrier.arrive full[0], 1, 2
                                        ^
      hint: write: mbarrier.arrive BAR[, COUNT]
      t.mbk:7:5: error[E-operand-count]: mbarrier.arrive.expect_tx takes 2 to 3 operands but 1 was given
            mbarrier.arrive.expect_tx full[0]
            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
      hint: write: mbarrier.arrive.expect_tx BAR, BYTES[, COUNT]
      t.mbk:8:23: error[E-operand-count]: fence.proxy.async takes 0 operands but 1 was given
            fence.proxy.async 1
                              ^
      hint: fence.proxy.async takes no operands"
    `);
  });
  test('E-operand-kind', () => {
    expect(errors(role('mbarrier.arrive tile[0]\ncp.async.bulk.tensor full[0], 16, full[0]\nwork full[0]\nwork 5@1\nx = 1\nmbarrier.try_wait full[0], x[0]\nmbarrier.expect_tx 3, 16'))).toMatchInlineSnapshot(`
      "t.mbk:6:21: error[E-operand-kind]: 'tile' is a buffer array but mbarrier.arrive expects a barrier here
            mbarrier.arrive tile[0]
                            ^~~~~~~
      hint: check the operand order: mbarrier.arrive BAR[, COUNT]
      t.mbk:7:26: error[E-operand-kind]: 'full' is a barrier array but cp.async.bulk.tensor expects a buffer here
            cp.async.bulk.tensor full[0], 16, full[0]
                                 ^~~~~~~
      hint: check the operand order: cp.async.bulk.tensor DST, BYTES, BAR [multicast=MASK] [chunks=N]
      t.mbk:8:10: error[E-operand-kind]: 'full' is a barrier array, not an integer
            work full[0]
                 ^~~~~~~
      hint: an integer is expected here; full[i] can only be an operand of an operation that takes a barrier
      t.mbk:9:10: error[E-operand-kind]: only barrier and buffer references take @CTA
            work 5@1
                 ^~~
      hint: this operand of work is an integer
      t.mbk:11:32: error[E-operand-kind]: mbarrier.try_wait expects a token variable here
            mbarrier.try_wait full[0], x[0]
                                       ^~~~
      hint: write the variable an arrive assigned: tok = mbarrier.arrive BAR, then mbarrier.try_wait ... tok
      t.mbk:12:24: error[E-operand-kind]: mbarrier.expect_tx expects a barrier reference here
            mbarrier.expect_tx 3, 16
                               ^
      hint: write a barrier array element such as full[s]"
    `);
  });
  test('E-unknown-option: roles, declarations, operations', () => {
    expect(errors(`${HEAD}barrier b[1] count=1 manul\nrole p warps=1 color=red:\n    cp.async.bulk.tensor tile[0], 1024, full[0] multicst=3\n    bar.sync 0 per=one\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:22: error[E-unknown-option]: unknown option 'manul' for barrier b
        barrier b[1] count=1 manul
                             ^~~~~
      hint: did you mean 'manual'? (barrier b accepts: count, manual, cta)
      t.mbk:6:16: error[E-unknown-option]: unknown option 'color' for role p
        role p warps=1 color=red:
                       ^~~~~
      hint: role p accepts: warps, warpgroups, threads, per, instances, where, cta
      t.mbk:7:49: error[E-unknown-option]: unknown option 'multicst' for cp.async.bulk.tensor
            cp.async.bulk.tensor tile[0], 1024, full[0] multicst=3
                                                        ^~~~~~~~
      hint: did you mean 'multicast'?
      t.mbk:8:16: error[E-unknown-option]: unknown option 'per' for bar.sync
            bar.sync 0 per=one
                       ^~~
      hint: bar.sync takes no options"
    `);
  });
  test('E-option-value: threads that do not fit the warps; threads alone set the warps', () => {
    expect(errors('kernel k arch=sm_90a\nrole q warps=1 threads=128:\n    exit\n')).toBe([
      't.mbk:2:24: error[E-option-value]: threads=128 do not fit in 1 warp (at most 32 threads)',
      '  role q warps=1 threads=128:',
      '                         ^~~',
      'hint: give warps=4, or leave warps out: threads alone sets the warps they fill',
    ].join('\n'));
    const k = kernelOf('kernel k arch=sm_90a\nrole q threads=100 per=warp:\n    exit\n');
    expect(k.roles[0]!.warps).toBe(4);
    expect(k.roles[0]!.threads).toBe(100);
  });
  test('E-option-value', () => {
    expect(errors(`kernel k arch=sm_80\nsmem t[1] bytes=16\nrole p warps=S per=all:\n    exit\nrole q warps=1 threads=0:\n    wgmma.mma_async t[0] shape=128x128\n`)).toMatchInlineSnapshot(`
      "t.mbk:1:15: error[E-option-value]: arch must be sm_90a (Hopper) or sm_100a (Blackwell)
        kernel k arch=sm_80
                      ^~~~~
      hint: write arch=sm_90a or arch=sm_100a
      t.mbk:3:14: error[E-option-value]: warps must be a positive integer literal
        role p warps=S per=all:
                     ^
      hint: write warps=N with a number (roles have a fixed size)
      t.mbk:3:20: error[E-option-value]: per must be thread, warp or one
        role p warps=S per=all:
                           ^~~
      hint: per=thread: every thread performs it; per=warp: one thread per warp; per=one: one elected thread
      t.mbk:5:24: error[E-option-value]: threads must be a positive integer literal
        role q warps=1 threads=0:
                               ^
      hint: write threads=N with a number (roles have a fixed size)
      t.mbk:6:32: error[E-option-value]: shape must be written MxNxK
            wgmma.mma_async t[0] shape=128x128
                                       ^~~~~~~
      hint: for example shape=128x128x64 (elements)"
    `);
  });
  test('E-missing-option', () => {
    expect(errors(`${HEAD}barrier b[2]\nsmem t[2]\nrole p warps=1:\n    wgmma.mma_async tile[0]\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:1: error[E-missing-option]: barrier b needs an init count
        barrier b[2]
        ^~~~~~~~~~~~
      hint: write count=N: the arrivals each phase expects, 1 to 1048575
      t.mbk:6:1: error[E-missing-option]: smem t needs a size
        smem t[2]
        ^~~~~~~~~
      hint: write bytes=N: the size in bytes of each element of the array
      t.mbk:8:5: error[E-missing-option]: wgmma.mma_async needs the option shape=
            wgmma.mma_async tile[0]
            ^~~~~~~~~~~~~~~~~~~~~~~
      hint: write: wgmma.mma_async A[, B...] shape=MxNxK"
    `);
  });
  test('E-init-count: declarations and mbarrier.init', () => {
    expect(errors(`${HEAD}barrier b[1] count=0\nbarrier c[1] count=1 << 20\nrole p warps=1:\n    mbarrier.init full[0], 0\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:20: error[E-init-count]: init count 0 of barrier b is outside [1, 1048575]
        barrier b[1] count=0
                           ^
      hint: an mbarrier expects 1 to 2^20 - 1 arrivals per phase
      t.mbk:6:20: error[E-init-count]: init count 1048576 of barrier c is outside [1, 1048575]
        barrier c[1] count=1 << 20
                           ^~~~~~~
      hint: an mbarrier expects 1 to 2^20 - 1 arrivals per phase
      t.mbk:8:28: error[E-init-count]: init count 0 is outside [1, 1048575]
            mbarrier.init full[0], 0
                                   ^
      hint: an mbarrier expects 1 to 2^20 - 1 arrivals per phase"
    `);
  });
  test('E-work-cycles: a constant negative work', () => {
    expect(errors(role('work -100\nwork 3 - 5\nwork 0'))).toMatchInlineSnapshot(`
      "t.mbk:6:10: error[E-work-cycles]: work of -100 cycles is negative
            work -100
                 ^~~~
      hint: work takes a non-negative number of cycles
      t.mbk:7:10: error[E-work-cycles]: work of -2 cycles is negative
            work 3 - 5
                 ^~~~~
      hint: work takes a non-negative number of cycles"
    `);
  });
  test('E-cp-size: a constant cp.async size other than 4, 8 or 16', () => {
    expect(errors(role('cp.async tile[0], 12\ncp.async tile[0], 16'))).toMatchInlineSnapshot(`
      "t.mbk:6:23: error[E-cp-size]: cp.async copies 4, 8 or 16 bytes per thread (its cp-size, PTX ISA §9.7.9.25.3.1), not 12
            cp.async tile[0], 12
                              ^~
      hint: write 4, 8 or 16: each thread copies that many bytes"
    `);
  });
  test('E-wait-group: a negative constant cp.async.wait_group', () => {
    expect(errors(role('cp.async.wait_group 0 - 1\ncp.async.wait_group 0'))).toMatchInlineSnapshot(`
      "t.mbk:6:25: error[E-wait-group]: cp.async.wait_group N takes a non-negative integer (the most recent groups left pending, PTX ISA §9.7.9.25.3.3), not -1
            cp.async.wait_group 0 - 1
                                ^~~~~
      hint: N is how many of the most recent groups may stay pending: 0 waits for all"
    `);
  });
  test('E-index-range: constant indices and CTA ranks', () => {
    expect(errors(role('mbarrier.arrive full[2]\nld.shared tile[-1]\nmbarrier.arrive full[0]@1'))).toMatchInlineSnapshot(`
      "t.mbk:6:26: error[E-index-range]: index 2 is out of range for barrier array full[2]
            mbarrier.arrive full[2]
                                 ^
      hint: valid indices are 0 to 1
      t.mbk:7:20: error[E-index-range]: index -1 is out of range for buffer array tile[2]
            ld.shared tile[-1]
                           ^~
      hint: valid indices are 0 to 1
      t.mbk:8:29: error[E-index-range]: CTA rank 1 is outside the cluster of 1 CTA
            mbarrier.arrive full[0]@1
                                    ^
      hint: ranks are 0 to 0; set cluster=N on the kernel line"
    `);
  });
  test('E-buffer-range: a constant byte range outside its element', () => {
    expect(errors(role('st.shared tile[1] + 1024\ncp.async.bulk.tensor tile[0] + 512, 1024, full[0]'))).toMatchInlineSnapshot(`
      "t.mbk:6:25: error[E-buffer-range]: byte offset 1024 is outside tile[1], which has 1024 bytes
            st.shared tile[1] + 1024
                                ^~~~
      hint: offsets are 0 to 1023; to reach another element index the array: tile[i]
      t.mbk:7:36: error[E-buffer-range]: bytes 512 to 1535 (offset 512, 1024 bytes) run past the end of tile[0], which has 1024 bytes
            cp.async.bulk.tensor tile[0] + 512, 1024, full[0]
                                           ^~~
      hint: the range must end by byte 1024: a smaller offset or byte count"
    `);
  });
  test('E-alias: an alias of no buffer array, or one that does not fit', () => {
    expect(errors(`${HEAD}smem v[3] bytes=1024 alias=tile\nsmem w bytes=16 alias=full\nrole p warps=1:\n    exit\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:28: error[E-alias]: v (3 × 1024 bytes from tile[0]) ends at byte 3072, past the 2048 bytes of tile
        smem v[3] bytes=1024 alias=tile
                                   ^~~~
      hint: an alias views storage that exists: make it smaller or start it earlier
      t.mbk:6:23: error[E-alias]: alias=full: 'full' is not a buffer array
        smem w bytes=16 alias=full
                              ^~~~
      hint: declare the array the alias views: smem A[N] bytes=B"
    `);
  });
  test('E-param-value', () => {
    expect(errors(`${HEAD}param Q = S + 1\nrole p warps=1:\n    exit\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:11: error[E-param-value]: the default of parameter Q must be an integer
        param Q = S + 1
                  ^~~~~
      hint: write an integer literal such as 4, 0x1000 or 16_384 (override it with --set NAME=VALUE)"
    `);
  });
  test('E-assign', () => {
    expect(errors(role('S = 3\ncta = 1\nfor full in range(2):\n    pass\nx = mbarrier.expect_tx full[0], 16\nmbarrier.pending_count x'))).toMatchInlineSnapshot(`
      "t.mbk:6:5: error[E-assign]: 'S' is a parameter and cannot be assigned
            S = 3
            ^
      hint: use another variable name
      t.mbk:7:5: error[E-assign]: 'cta' is a builtin and cannot be assigned
            cta = 1
            ^~~
      hint: use another variable name
      t.mbk:8:9: error[E-assign]: 'full' is a barrier array and cannot be assigned
            for full in range(2):
                ^~~~
      hint: use another variable name
      t.mbk:10:5: error[E-assign]: mbarrier.expect_tx has no result to assign
            x = mbarrier.expect_tx full[0], 16
            ^
      hint: write it without 'x =': mbarrier.expect_tx BAR, BYTES
      t.mbk:11:5: error[E-assign]: the result of mbarrier.pending_count must be assigned to a variable
            mbarrier.pending_count x
            ^~~~~~~~~~~~~~~~~~~~~~
      hint: write: n = mbarrier.pending_count TOKEN"
    `);
  });
  test('E-arch', () => {
    expect(errors(role('tcgen05.commit full[0]\nwgmma.commit_group'))).toMatchInlineSnapshot(`
      "t.mbk:6:5: error[E-arch]: tcgen05.commit needs sm_100a but the kernel targets sm_90a
            tcgen05.commit full[0]
            ^~~~~~~~~~~~~~
      hint: tcgen05 instructions exist on Blackwell: set arch=sm_100a on the kernel line (Hopper uses wgmma)"
    `);
    expect(errors(role('wgmma.commit_group', B_HEAD))).toMatchInlineSnapshot(`
      "t.mbk:7:5: error[E-arch]: wgmma.commit_group needs sm_90a but the kernel targets sm_100a
            wgmma.commit_group
            ^~~~~~~~~~~~~~~~~~
      hint: wgmma exists on Hopper only: set arch=sm_90a on the kernel line (Blackwell uses tcgen05)"
    `);
  });
  test('E-kernel-*: errors of instantiate() with the default parameters', () => {
    expect(errors(`${HEAD}role p warps=1 where=cta == 5:\n    exit\n`)).toMatchInlineSnapshot(`
      "t.mbk:5:1: error[E-kernel-no-roles]: the kernel has no roles to run (no role, or every role's where-condition is false)
        role p warps=1 where=cta == 5:
        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
      hint: the kernel cannot be instantiated with its default parameters"
    `);
    expect(errors(`kernel k\nparam N = 0\nsmem t[4 / N] bytes=16\nrole p:\n    ld.shared t[0]\n`)).toMatchInlineSnapshot(`
      "t.mbk:3:8: error[E-arith]: division by zero: 4 / 0
        smem t[4 / N] bytes=16
               ^~~~~
      hint: the divisor is 0 with the parameters' defaults: change the default, or guard the division (d != 0 && n / d ...)"
    `);
    // Checked before instantiation: a length that is 0 with the defaults.
    expect(errors(`kernel k\nparam N = 0\nsmem t[N] bytes=16\nrole p:\n    ld.shared t[0]\n`)).toMatchInlineSnapshot(`
      "t.mbk:3:8: error[E-option-value]: the length of buffer array t is 0; it needs at least 1
        smem t[N] bytes=16
               ^
      hint: arrays have at least one element"
    `);
  });
  test('E-internal: an unexpected exception becomes a diagnostic, never a throw', async () => {
    vi.resetModules();
    vi.doMock('../src/lang/lower.js', () => ({ lower: () => { throw new Error('boom'); } }));
    const m = await import('../src/lang/index.js');
    const r = m.parseSketch('kernel k\n', 'x.mbk');
    vi.doUnmock('../src/lang/lower.js');
    vi.resetModules();
    expect(r.kernel).toBeUndefined();
    expect(m.formatDiagnostic(r.diagnostics[0]!, 'kernel k\n')).toMatchInlineSnapshot(`
      "x.mbk:1:1: error[E-internal]: internal error: boom
        kernel k
        ^
      hint: this is a bug in mbsim; please report it with the sketch"
    `);
  });
  test('every code has a test above', () => {
    const me = readFileSync(fileURLToPath(import.meta.url), 'utf8');
    for (const c of Object.values(SKETCH_CODES)) expect(me, c).toContain(`test('${c}`);
  });
  test('several errors are reported in one run, in source order', () => {
    const r = parseSketch(`${HEAD}barrier full[1] count=1\nrole p warps=1:\n    mbarrier.arive full[0]\n    x = y\n    work 1 2\n    ld.shared tile[9]\n`, 't.mbk');
    expect(r.diagnostics.map((d) => `${d.line}:${d.col} ${d.code}`)).toEqual([
      '5:9 E-duplicate', '7:5 E-unknown-mnemonic', '8:9 E-unknown-name', '9:12 E-syntax', '10:20 E-index-range',
    ]);
  });
});

describe('layout: INDENT / DEDENT', () => {
  const kinds = (src: string) => lex(src, 't').tokens.map((t) => (['Indent', 'Dedent', 'Newline'].includes(t.tokenType.name) ? t.tokenType.name[0] : t.image)).join(' ');

  test('nested blocks and a dedent by several levels at once', () => {
    const src = 'role p:\n  for i in range(2):\n    if i:\n      exit\nkernel k\n';
    expect(kinds(src)).toBe('role p : N I for i in range ( 2 ) : N I if i : N I exit N D D D kernel k N');
  });
  test('blank lines, whitespace-only lines and comments at odd indentation produce no tokens', () => {
    const src = 'role p:\n\n    work 1\n   \n        # deeper comment\n  # shallower comment\n\t# tab comment\n    work 2\n';
    expect(kinds(src)).toBe('role p : N I work 1 N work 2 N D');
    expect(lex(src, 't').diagnostics).toEqual([]);
  });
  test('end of file without a newline closes every block', () => {
    expect(kinds('role p:\n    if 1:\n        exit')).toBe('role p : N I if 1 : N I exit N D D');
  });
  test('CRLF and CR line ends', () => {
    const lf = 'kernel k\nrole p:\n    for i in range(2):\n        work 1\n    exit\n';
    expect(kinds(lf.replace(/\n/g, '\r\n'))).toBe(kinds(lf));
    expect(kinds(lf.replace(/\n/g, '\r'))).toBe(kinds(lf));
    const k1 = kernelOf(lf);
    const k2 = kernelOf(lf.replace(/\n/g, '\r\n'));
    expect(k2).toEqual({ ...k1 });
    expect((k2.roles[0]!.body[1] as Extract<Stmt, { s: 'op' }>).loc).toEqual({ file: 't.mbk', line: 5, col: 5, endCol: 9 });
  });
  test('tabs only is fine; a tab counts as one column', () => {
    expect(errors('kernel k\nrole p:\n\tfor i in range(2):\n\t\twork 1\n\texit\n')).toBe('');
  });
  test('a line continues after a comma, and inside brackets after ( [ or an operator', () => {
    const k = kernelOf('kernel k\nsmem t[1] bytes=64\nbarrier b[1] count=1\nrole p per=one:\n    cp.async.bulk.tensor t[0],\n            (32 +\n      32), b[0]\n    exit\n');
    expect(strip(k.roles[0]!.body[0])).toEqual({ s: 'op', op: { op: 'cp.async.bulk', tensor: true, dst: { name: 't', index: { k: 'num', v: 0 } }, bytes: { k: 'bin', op: '+', a: { k: 'num', v: 32 }, b: { k: 'num', v: 32 } }, bar: { name: 'b', index: { k: 'num', v: 0 } } } });
  });
  test('an unclosed bracket ends at the line end when the line cannot continue', () => {
    expect(errors(role('x = (1\ny = 2'))).toMatchInlineSnapshot(`
      "t.mbk:6:11: error[E-syntax]: expected ')' but found the end of the line
            x = (1
                  ^
      hint: check that every bracket is closed"
    `);
  });
  test('the statements after a dedent belong to the outer block', () => {
    const k = kernelOf('kernel k\nrole p:\n    for i in range(2):\n        if i == 1:\n            work 1\n        else:\n            work 2\n        work 3\n    work 4\n');
    const body = strip(k.roles[0]!.body);
    expect(body.length).toBe(2);
    const f = body[0] as Extract<Stmt, { s: 'for' }>;
    expect(f.body.length).toBe(2);
    expect((f.body[0] as Extract<Stmt, { s: 'if' }>).else!.length).toBe(1);
  });
  test('pass makes an empty block', () => {
    expect(strip(kernelOf('kernel k\nrole p:\n    if 1:\n        pass\n    exit\n').roles[0]!.body[0])).toEqual({ s: 'if', cond: { k: 'num', v: 1 }, then: [] });
  });
});

describe('every construct of the IR is expressible', () => {
  const n = (v: number): Expr => ({ k: 'num', v });
  const v = (name: string): Expr => ({ k: 'var', name });
  const R = (name: string, index: Expr = n(0), cta?: Expr): BarRef => (cta ? { name, index, cta } : { name, index });
  /** [source line, expected op] for every mnemonic of the table. */
  const CASES: [string, Op][] = [
    ['mbarrier.init full[1]', { op: 'mbarrier.init', bar: R('full', n(1)) }],
    ['mbarrier.init full[0], 3', { op: 'mbarrier.init', bar: R('full'), count: n(3) }],
    ['mbarrier.inval full[0]', { op: 'mbarrier.inval', bar: R('full') }],
    ['mbarrier.arrive full[0]', { op: 'mbarrier.arrive', bar: R('full') }],
    ['mbarrier.arrive full[0], 2 per=warp', { op: 'mbarrier.arrive', bar: R('full'), count: n(2), per: 'warp' }],
    ['mbarrier.arrive full[0]@(1 - cta)', { op: 'mbarrier.arrive', bar: R('full', n(0), { k: 'bin', op: '-', a: n(1), b: v('cta') }) }],
    ['mbarrier.arrive.noComplete full[0], 1', { op: 'mbarrier.arrive', bar: R('full'), count: n(1), noComplete: true }],
    ['mbarrier.arrive.expect_tx full[0], 64', { op: 'mbarrier.arrive', bar: R('full'), expectTx: n(64) }],
    ['mbarrier.arrive.expect_tx full[0], 64, 2', { op: 'mbarrier.arrive', bar: R('full'), expectTx: n(64), count: n(2) }],
    ['mbarrier.arrive.expect_tx.noComplete full[0], 64, 1', { op: 'mbarrier.arrive', bar: R('full'), expectTx: n(64), count: n(1), noComplete: true }],
    ['mbarrier.arrive_drop full[0]', { op: 'mbarrier.arrive', bar: R('full'), drop: true }],
    ['mbarrier.arrive_drop.noComplete full[0], 1', { op: 'mbarrier.arrive', bar: R('full'), drop: true, count: n(1), noComplete: true }],
    ['mbarrier.arrive_drop.expect_tx full[0], 64', { op: 'mbarrier.arrive', bar: R('full'), drop: true, expectTx: n(64) }],
    ['mbarrier.arrive_drop.expect_tx.noComplete full[0], 64, 1', { op: 'mbarrier.arrive', bar: R('full'), drop: true, expectTx: n(64), count: n(1), noComplete: true }],
    ['tok = mbarrier.arrive full[0] per=one', { op: 'mbarrier.arrive', bar: R('full'), token: 'tok', per: 'one' }],
    ['mbarrier.expect_tx full[0], 64 per=one', { op: 'mbarrier.expect_tx', bar: R('full'), bytes: n(64), per: 'one' }],
    ['mbarrier.complete_tx full[0], 64', { op: 'mbarrier.complete_tx', bar: R('full'), bytes: n(64) }],
    ['mbarrier.try_wait.parity full[0], 1', { op: 'mbarrier.wait', form: 'try_wait', bar: R('full'), parity: n(1) }],
    ['ok = mbarrier.test_wait.parity full[0], 1', { op: 'mbarrier.wait', form: 'test_wait', bar: R('full'), parity: n(1), dest: 'ok' }],
    ['ok = mbarrier.try_wait.parity full[0], 0', { op: 'mbarrier.wait', form: 'try_wait', bar: R('full'), parity: n(0), dest: 'ok' }],
    ['mbarrier.try_wait full[0], t', { op: 'mbarrier.wait', form: 'try_wait', bar: R('full'), token: 't' }],
    ['ok = mbarrier.test_wait full[0], t', { op: 'mbarrier.wait', form: 'test_wait', bar: R('full'), token: 't', dest: 'ok' }],
    ['c = mbarrier.pending_count t', { op: 'mbarrier.pending_count', token: 't', dest: 'c' }],
    ['cp.async.bulk.tensor tile[1], 64, full[1]', { op: 'cp.async.bulk', tensor: true, dst: R('tile', n(1)), bytes: n(64), bar: R('full', n(1)) }],
    ['cp.async.bulk.tensor tile[0], 64, full[0] multicast=3 chunks=4 per=one', { op: 'cp.async.bulk', tensor: true, dst: R('tile'), bytes: n(64), bar: R('full'), multicast: n(3), chunks: n(4), per: 'one' }],
    ['cp.async.bulk tile[0], 64, full[0], multicast=0b11', { op: 'cp.async.bulk', tensor: false, dst: R('tile'), bytes: n(64), bar: R('full'), multicast: n(3) }],
    ['cp.async.bulk.store tile[0], 64', { op: 'cp.async.bulk.store', src: R('tile'), bytes: n(64) }],
    ['cp.async.bulk.store tile[0], 64 per=one', { op: 'cp.async.bulk.store', src: R('tile'), bytes: n(64), per: 'one' }],
    ['cp.async.bulk.commit_group', { op: 'cp.async.bulk.commit_group' }],
    ['cp.async.bulk.wait_group 1', { op: 'cp.async.bulk.wait_group', n: n(1), read: false }],
    ['cp.async.bulk.wait_group.read 0', { op: 'cp.async.bulk.wait_group', n: n(0), read: true }],
    ['tcgen05.mma acc[0], tile[0], tile[1] shape=128x256x16', { op: 'tcgen05.mma', reads: [R('tile'), R('tile', n(1))], acc: R('acc'), shape: { m: 128, n: 256, k: 16 } }],
    ['tcgen05.commit full[0]', { op: 'tcgen05.commit', bar: R('full') }],
    ['tcgen05.commit full[0] multicast=(1 << ncta) - 1', { op: 'tcgen05.commit', bar: R('full'), multicast: { k: 'bin', op: '-', a: { k: 'bin', op: '<<', a: n(1), b: v('ncta') }, b: n(1) } }],
    ['tcgen05.ld acc[0]', { op: 'tcgen05.ld', src: R('acc') }],
    ['tcgen05.mma.cta_group::2 acc[0], tile[0], tile[1] shape=256x128x16', { op: 'tcgen05.mma', reads: [R('tile'), R('tile', n(1))], acc: R('acc'), shape: { m: 256, n: 128, k: 16 }, pair: true }],
    ['tcgen05.commit.cta_group::2 full[0] multicast=3', { op: 'tcgen05.commit', bar: R('full'), multicast: n(3) }],
    ['tcgen05.alloc acc[0]', { op: 'tcgen05.alloc', buf: R('acc') }],
    ['tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 acc[0]', { op: 'tcgen05.alloc', buf: R('acc') }],
    ['tcgen05.dealloc acc[0]', { op: 'tcgen05.dealloc', buf: R('acc') }],
    ['tcgen05.relinquish_alloc_permit', { op: 'tcgen05.relinquish_alloc_permit' }],
    ['tcgen05.alloc.cta_group::2 acc[0]', { op: 'tcgen05.alloc', buf: R('acc'), pair: true }],
    ['tcgen05.dealloc.cta_group::2 acc[0]', { op: 'tcgen05.dealloc', buf: R('acc'), pair: true }],
    ['tcgen05.relinquish_alloc_permit.cta_group::2', { op: 'tcgen05.relinquish_alloc_permit', pair: true }],
    ['tcgen05.ld.sync.aligned acc[0]', { op: 'tcgen05.ld.async', src: R('acc') }],
    // the data-movement shape qualifiers lex as part of the mnemonic (PTX ISA §9.7.16.8.3)
    ['tcgen05.ld.sync.aligned.32x32b.x8.b32 acc[0]', { op: 'tcgen05.ld.async', src: R('acc') }],
    ['tcgen05.ld.sync.aligned.16x32bx2.x2.pack::16b.b32 acc[0]', { op: 'tcgen05.ld.async', src: R('acc') }],
    ['tcgen05.st.sync.aligned.16x256b.x4.b32 acc[0]', { op: 'tcgen05.st', dst: R('acc') }],
    ['tcgen05.st acc[0]', { op: 'tcgen05.st', dst: R('acc') }],
    ['tcgen05.st.sync.aligned acc[0]', { op: 'tcgen05.st', dst: R('acc') }],
    ['tcgen05.wait::ld', { op: 'tcgen05.wait::ld' }],
    ['tcgen05.wait::st', { op: 'tcgen05.wait::st' }],
    ['tcgen05.wait::st.sync.aligned', { op: 'tcgen05.wait::st' }],
    ['tcgen05.cp acc[0], tile[1]', { op: 'tcgen05.cp', dst: R('acc'), src: R('tile', n(1)) }],
    ['tcgen05.shift acc[0]', { op: 'tcgen05.shift', buf: R('acc') }],
    ['tcgen05.fence::before_thread_sync', { op: 'tcgen05.fence::before_thread_sync' }],
    ['tcgen05.fence::after_thread_sync', { op: 'tcgen05.fence::after_thread_sync' }],
    ['cp.async tile[0], 16', { op: 'cp.async', dst: R('tile'), bytes: n(16) }],
    ['cp.async.mbarrier.arrive full[0]', { op: 'cp.async.mbarrier.arrive', bar: R('full'), noinc: false }],
    ['cp.async.mbarrier.arrive.noinc full[0]', { op: 'cp.async.mbarrier.arrive', bar: R('full'), noinc: true }],
    ['bar.sync 1', { op: 'bar.sync', id: n(1) }],
    ['bar.sync 1, 64', { op: 'bar.sync', id: n(1), threads: n(64) }],
    ['bar.arrive 2, 0x40', { op: 'bar.arrive', id: n(2), threads: n(64) }],
    ['fence.proxy.async', { op: 'fence.proxy.async' }],
    ['fence.mbarrier_init', { op: 'fence.mbarrier_init' }],
    ['fence.mbarrier_init.release.cluster', { op: 'fence.mbarrier_init' }],
    ['barrier.cluster.arrive', { op: 'barrier.cluster.arrive' }],
    ['barrier.cluster.wait', { op: 'barrier.cluster.wait' }],
    ['barrier.cluster.arrive.relaxed.aligned', { op: 'barrier.cluster.arrive', sem: 'relaxed', aligned: true }],
    ['barrier.cluster.arrive.release', { op: 'barrier.cluster.arrive', sem: 'release' }],
    ['barrier.cluster.wait.acquire.aligned', { op: 'barrier.cluster.wait', aligned: true }],
    ['barrier.sync 1, 64', { op: 'bar.sync', id: n(1), threads: n(64), aligned: false }],
    ['barrier.sync.aligned 1', { op: 'bar.sync', id: n(1) }],
    ['barrier.arrive 2, 64', { op: 'bar.arrive', id: n(2), threads: n(64), aligned: false }],
    ['bar.cta.sync 3', { op: 'bar.sync', id: n(3) }],
    ['fence.acq_rel.cta', { op: 'fence', sem: 'acq_rel', scope: 'cta' }],
    ['fence.sc.gpu', { op: 'fence', sem: 'sc', scope: 'gpu' }],
    ['fence.cluster', { op: 'fence', sem: 'acq_rel', scope: 'cluster' }],
    ['fence.acquire.sync_restrict::shared::cluster.cluster', { op: 'fence', sem: 'acquire', scope: 'cluster' }],
    ['membar.gl', { op: 'fence', sem: 'sc', scope: 'gpu' }],
    ['ld.shared tile[1]@1', { op: 'ld.shared', buf: R('tile', n(1), n(1)) }],
    ['ld.shared tile, 16', { op: 'ld.shared', buf: R('tile'), bytes: n(16) }],
    ['st.shared tile[0]', { op: 'st.shared', buf: R('tile') }],
    ['work 1_000', { op: 'work', cycles: n(1000) }],
    ['exit', { op: 'exit' }],
    ['cp.async.commit_group', { op: 'cp.async.commit_group' }],
    ['cp.async.wait_group 1', { op: 'cp.async.wait_group', n: n(1), all: false }],
    ['cp.async.wait_all', { op: 'cp.async.wait_group', n: n(0), all: true }],
    ['cp.async.cg.shared.global tile[0], 16', { op: 'cp.async', dst: R('tile'), bytes: n(16) }],
    ['st.async tile[0]@1, 8, full[0]@1 per=thread', { op: 'st.async', red: false, dst: R('tile', n(0), n(1)), bytes: n(8), bar: R('full', n(0), n(1)), per: 'thread' }],
    ['red.async tile[0]@1, 4, full[0]@1', { op: 'st.async', red: true, dst: R('tile', n(0), n(1)), bytes: n(4), bar: R('full', n(0), n(1)) }],
    ['red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.min tile[0]@1, 4, full[0]@1', { op: 'st.async', red: true, dst: R('tile', n(0), n(1)), bytes: n(4), bar: R('full', n(0), n(1)), redop: 'min' }],
    ['cp.async.bulk.shared::cluster tile[1]@1, tile[0], 64, full[1]@1', { op: 'cp.async.bulk.shared::cluster', dst: R('tile', n(1), n(1)), src: R('tile'), bytes: n(64), bar: R('full', n(1), n(1)) }],
    ['cp.reduce.async.bulk tile[0], 64', { op: 'cp.reduce.async.bulk', tensor: false, src: R('tile'), bytes: n(64) }],
    ['cp.reduce.async.bulk.tensor tile[0], 64 per=one', { op: 'cp.reduce.async.bulk', tensor: true, src: R('tile'), bytes: n(64), per: 'one' }],
    ['cp.async.bulk.prefetch 4096', { op: 'cp.async.bulk.prefetch', tensor: false, bytes: n(4096) }],
    ['cp.async.bulk.prefetch.tensor 4096', { op: 'cp.async.bulk.prefetch', tensor: true, bytes: n(4096) }],
    ['cp.async.bulk.prefetch.tensor.4d.L2.global 4096', { op: 'cp.async.bulk.prefetch', tensor: true, bytes: n(4096) }],
    // values, global memory and cluster launch control
    ['x = ld.shared tile[0]', { op: 'ld.shared', buf: R('tile'), dest: 'x' }],
    ['st.shared tile[0] value=3', { op: 'st.shared', buf: R('tile'), value: n(3) }],
    ['x = ld.global g[0]', { op: 'ld.global', buf: R('g'), dest: 'x' }],
    ['st.global g[1], 5', { op: 'st.global', buf: R('g', n(1)), value: n(5) }],
    ['x = ld.acquire.gpu.global g[0]', { op: 'ld.strong', buf: R('g'), sem: 'acquire', scope: 'gpu', dest: 'x' }],
    ['ld.relaxed.sys.global.u32 g[0]', { op: 'ld.strong', buf: R('g'), sem: 'relaxed', scope: 'sys' }],
    ['st.release.gpu.global g[0], 1', { op: 'st.strong', buf: R('g'), value: n(1), sem: 'release', scope: 'gpu' }],
    ['x = atom.global.add g[0], 1', { op: 'atom.global', buf: R('g'), red: false, aop: 'add', value: n(1), sem: 'relaxed', scope: 'gpu', dest: 'x' }],
    ['x = atom.acq_rel.gpu.global.exch.b32 g[0], 2', { op: 'atom.global', buf: R('g'), red: false, aop: 'exch', value: n(2), sem: 'acq_rel', scope: 'gpu', dest: 'x' }],
    ['x = atom.global.cas g[0], 0, 2', { op: 'atom.global', buf: R('g'), red: false, aop: 'cas', compare: n(0), value: n(2), sem: 'relaxed', scope: 'gpu', dest: 'x' }],
    ['x = atom.acq_rel.gpu.global.cas.b32 g[1], 1, 0', { op: 'atom.global', buf: R('g', n(1)), red: false, aop: 'cas', compare: n(1), value: n(0), sem: 'acq_rel', scope: 'gpu', dest: 'x' }],
    ['red.global.add g[0], 1', { op: 'atom.global', buf: R('g'), red: true, aop: 'add', value: n(1), sem: 'relaxed', scope: 'gpu' }],
    ['red.release.cluster.global.max.u32 g[1], 3', { op: 'atom.global', buf: R('g', n(1)), red: true, aop: 'max', value: n(3), sem: 'release', scope: 'cluster' }],
    ['x = spin.acquire.gpu.ge g[0], 2', { op: 'spin.global', buf: R('g'), cmp: 'ge', target: n(2), sem: 'acquire', scope: 'gpu', dest: 'x' }],
    ['spin.relaxed.cta.eq g[0], 1', { op: 'spin.global', buf: R('g'), cmp: 'eq', target: n(1), sem: 'relaxed', scope: 'cta' }],
    ['clusterlaunchcontrol.try_cancel tile[0], full[0]', { op: 'clc.try_cancel', dst: R('tile'), bar: R('full'), multicast: false }],
    ['clusterlaunchcontrol.try_cancel.multicast::cluster::all tile[0], full[1]', { op: 'clc.try_cancel', dst: R('tile'), bar: R('full', n(1)), multicast: true }],
    ['clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 tile[0], full[0]', { op: 'clc.try_cancel', dst: R('tile'), bar: R('full'), multicast: true }],
    ['x = clusterlaunchcontrol.query_cancel.is_canceled tile[0]', { op: 'clc.query', src: R('tile'), what: 'is_canceled', dest: 'x' }],
    ['x = clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 tile[0]', { op: 'clc.query', src: R('tile'), what: 'is_canceled', dest: 'x' }],
    ['x = clusterlaunchcontrol.query_cancel.get_first_ctaid tile[0]', { op: 'clc.query', src: R('tile'), what: 'first_ctaid', dest: 'x' }],
    ['x = clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 tile[0]', { op: 'clc.query', src: R('tile'), what: 'first_ctaid', dest: 'x' }],
  ];
  const BW = 'kernel k arch=sm_100a cluster=2\nbarrier full[2] count=1\nsmem tile[2] bytes=64\ntmem acc[1] bytes=4096 cols=128\ngmem g[2] init=0\n';
  test.each(CASES)('%s', (line, op) => {
    const prelude = 't = mbarrier.arrive full[0]\n';
    const ops = opsOf(`${prelude}${line}`, BW);
    expect(ops[1]).toEqual(op);
  });
  test('wgmma (Hopper)', () => {
    const ops = opsOf('wgmma.mma_async tile[0], tile[1] shape=64x256x16\nwgmma.commit_group\nwgmma.wait_group 1', 'kernel k arch=sm_90a\nsmem tile[2] bytes=64\n');
    expect(ops).toEqual([
      { op: 'wgmma.mma_async', reads: [R('tile'), R('tile', n(1))], shape: { m: 64, n: 256, k: 16 } },
      { op: 'wgmma.commit_group' },
      { op: 'wgmma.wait_group', n: n(1) },
    ]);
  });
  test('every mnemonic of the table and every IR operation is covered', () => {
    const written = new Set(CASES.map(([l]) => l.replace(/^\w+ = /, '').split(' ')[0]!));
    for (const s of ['wgmma.mma_async', 'wgmma.commit_group', 'wgmma.wait_group', 'fence']) written.add(s);
    for (const o of OPS) expect(written, o.name).toContain(o.name);
    const kinds = new Set(CASES.map(([, o]) => o.op));
    for (const k of ['mbarrier.init', 'mbarrier.inval', 'mbarrier.arrive', 'mbarrier.expect_tx', 'mbarrier.complete_tx', 'mbarrier.wait', 'mbarrier.pending_count', 'cp.async.bulk', 'cp.async.bulk.store', 'cp.async.bulk.commit_group', 'cp.async.bulk.wait_group', 'tcgen05.mma', 'tcgen05.commit', 'tcgen05.ld', 'tcgen05.alloc', 'tcgen05.dealloc', 'tcgen05.relinquish_alloc_permit', 'tcgen05.ld.async', 'tcgen05.st', 'tcgen05.wait::ld', 'tcgen05.wait::st', 'tcgen05.cp', 'tcgen05.shift', 'tcgen05.fence::before_thread_sync', 'tcgen05.fence::after_thread_sync', 'cp.async', 'cp.async.mbarrier.arrive', 'bar.sync', 'bar.arrive', 'fence.proxy.async', 'fence.mbarrier_init', 'barrier.cluster.arrive', 'barrier.cluster.wait', 'ld.shared', 'st.shared', 'work', 'exit',
      'cp.async.commit_group', 'cp.async.wait_group', 'st.async', 'cp.async.bulk.shared::cluster', 'cp.reduce.async.bulk', 'cp.async.bulk.prefetch', 'fence',
      'ld.global', 'st.global', 'ld.strong', 'st.strong', 'atom.global', 'spin.global', 'clc.try_cancel', 'clc.query']) {
      expect(kinds, k).toContain(k);
    }
  });

  test('declarations, roles and the kernel line', () => {
    const k = strip(kernelOf([
      'kernel "my-kernel" arch=sm_90a cluster=CL grid=2 * G description="a \\"quoted\\" text"',
      'param CL = 2', 'param G = 0x3', 'param NEG = -4', 'param BIG = 16_384',
      'barrier a[CL * 2] count=ncta manual cta=1',
      'barrier b count=1                 # no [LEN]: one barrier',
      'smem s[2] bytes=BIG', 'tmem t[1] bytes=128',
      'role r1 warps=2 threads=48 per=warp instances=G where=cta == 0 || clusterid > 0:', '    exit',
      'role r2 warpgroups=2 cta=1:', '    exit',
      'role r3:', '    exit',
    ].join('\n')));
    expect(k).toEqual({
      name: 'my-kernel', arch: 'sm_90a', description: 'a "quoted" text',
      params: [{ name: 'CL', value: 2 }, { name: 'G', value: 3 }, { name: 'NEG', value: -4 }, { name: 'BIG', value: 16384 }],
      cluster: v('CL'), grid: { k: 'bin', op: '*', a: n(2), b: v('G') },
      barriers: [
        { name: 'a', length: { k: 'bin', op: '*', a: v('CL'), b: n(2) }, count: v('ncta'), init: 'manual', cta: n(1) },
        { name: 'b', length: n(1), count: n(1), init: 'auto', scalar: true },
      ],
      buffers: [
        { name: 's', space: 'smem', length: n(2), bytes: v('BIG') },
        { name: 't', space: 'tmem', length: n(1), bytes: n(128) },
      ],
      roles: [
        { name: 'r1', warps: 2, threads: 48, per: 'warp', instances: v('G'), instancesLoc: { line: 10, col: 47, endCol: 48 }, where: { k: 'bin', op: '||', a: { k: 'bin', op: '==', a: v('cta'), b: n(0) }, b: { k: 'bin', op: '>', a: v('clusterid'), b: n(0) } }, body: [{ s: 'op', op: { op: 'exit' } }] },
        { name: 'r2', warps: 8, per: 'thread', where: { k: 'bin', op: '==', a: v('cta'), b: n(1) }, body: [{ s: 'op', op: { op: 'exit' } }] },
        { name: 'r3', warps: 1, per: 'thread', body: [{ s: 'op', op: { op: 'exit' } }] },
      ],
    });
  });

  test('statements: let, for (1, 2 and 3 arguments), if / elif / else, elect', () => {
    const body = strip(kernelOf('kernel k\nrole p:\n    x = 1\n    for i in range(4):\n        pass\n    for i in range(1, 9, 2):\n        pass\n    if x == 1:\n        work 1\n    elif x == 2:\n        work 2\n    else:\n        work 3\n    elect:\n        exit\n').roles[0]!.body);
    const w = (c: number) => ({ s: 'op', op: { op: 'work', cycles: n(c) } });
    expect(body).toEqual([
      { s: 'let', name: 'x', value: n(1) },
      { s: 'for', var: 'i', from: n(0), to: n(4), body: [] },
      { s: 'for', var: 'i', from: n(1), to: n(9), step: n(2), body: [] },
      { s: 'if', cond: { k: 'bin', op: '==', a: v('x'), b: n(1) }, then: [w(1)], else: [
        { s: 'if', cond: { k: 'bin', op: '==', a: v('x'), b: n(2) }, then: [w(2)], else: [w(3)] },
      ] },
      { s: 'elect', body: [{ s: 'op', op: { op: 'exit' } }] },
    ]);
  });

  test('expressions: C precedence, and/or/not, unary operators, literals', () => {
    const val = (e: string) => (strip(kernelOf(`kernel k\nparam P = 1\nrole p:\n    x = ${e}\n`).roles[0]!.body[0]) as Extract<Stmt, { s: 'let' }>).value;
    expect(val('1 + 2 * 3')).toEqual({ k: 'bin', op: '+', a: n(1), b: { k: 'bin', op: '*', a: n(2), b: n(3) } });
    expect(val('((i / S) & 1) ^ 1'.replace(/i|S/g, 'P'))).toEqual({ k: 'bin', op: '^', a: { k: 'bin', op: '&', a: { k: 'bin', op: '/', a: v('P'), b: v('P') }, b: n(1) }, b: n(1) });
    expect(val('P & 1 == 0')).toEqual({ k: 'bin', op: '&', a: v('P'), b: { k: 'bin', op: '==', a: n(1), b: n(0) } });
    expect(val('not P and P or !P')).toEqual({ k: 'bin', op: '||', a: { k: 'bin', op: '&&', a: { k: 'un', op: '!', a: v('P') }, b: v('P') }, b: { k: 'un', op: '!', a: v('P') } });
    expect(val('-~P % 3 - 1 << 2 >> 1 | 0b10')).toEqual({ k: 'bin', op: '|', a: { k: 'bin', op: '>>', a: { k: 'bin', op: '<<', a: { k: 'bin', op: '-', a: { k: 'bin', op: '%', a: { k: 'un', op: '-', a: { k: 'un', op: '~', a: v('P') } }, b: n(3) }, b: n(1) }, b: n(2) }, b: n(1) }, b: n(2) });
    expect(val('P < 1 && P <= 1 || P > 1 && P >= 1 || P != 1')).toEqual({ k: 'bin', op: '||', a: { k: 'bin', op: '||', a: { k: 'bin', op: '&&', a: { k: 'bin', op: '<', a: v('P'), b: n(1) }, b: { k: 'bin', op: '<=', a: v('P'), b: n(1) } }, b: { k: 'bin', op: '&&', a: { k: 'bin', op: '>', a: v('P'), b: n(1) }, b: { k: 'bin', op: '>=', a: v('P'), b: n(1) } } }, b: { k: 'bin', op: '!=', a: v('P'), b: n(1) } });
  });
});

describe('source locations', () => {
  const src = 'kernel k\n# comment\nparam N = 4\nbarrier full[N] count=1   # trailing comment\nrole p per=one:\n    for i in range(0, N):\n        mbarrier.arrive full[i % N]\n';
  const k = kernelOf(src);
  test('on declarations and statements: file, line, col, endCol of the line without its comment', () => {
    expect(k.params[0]!.loc).toEqual({ file: 't.mbk', line: 3, col: 1, endCol: 12 });
    expect(k.barriers[0]!.loc).toEqual({ file: 't.mbk', line: 4, col: 1, endCol: 24 });
    expect(k.roles[0]!.loc).toEqual({ file: 't.mbk', line: 5, col: 1, endCol: 16 });
    const f = k.roles[0]!.body[0] as Extract<Stmt, { s: 'for' }>;
    expect(f.loc).toEqual({ file: 't.mbk', line: 6, col: 5, endCol: 26 });
    expect(f.body[0]!.loc).toEqual({ file: 't.mbk', line: 7, col: 9, endCol: 36 });
    expect(k.file).toBe('t.mbk');
  });
  test('on variables inside expressions', () => {
    const op = (k.roles[0]!.body[0] as Extract<Stmt, { s: 'for' }>).body[0] as Extract<Stmt, { s: 'op' }>;
    const idx = (op.op as Extract<Op, { op: 'mbarrier.arrive' }>).bar.index as Extract<Expr, { k: 'bin' }>;
    expect(idx.a).toEqual({ k: 'var', name: 'i', loc: { file: 't.mbk', line: 7, col: 30, endCol: 31 } });
  });
});

describe('documentation', () => {
  test('the example at the top of docs/LANGUAGE.md parses and runs', async () => {
    const doc = readFileSync(fileURLToPath(new URL('../docs/LANGUAGE.md', import.meta.url)), 'utf8');
    const src = /```python\n([\s\S]*?)```/.exec(doc)![1]!;
    const k = kernelOf(src);
    const { instantiate } = await import('../src/machine/program.js');
    const { simulate } = await import('../src/sim/simulate.js');
    expect(simulate(instantiate(k)).verdict).toBe('ok');
  });
  test('every code of SKETCH_CODES is documented', () => {
    const doc = readFileSync(fileURLToPath(new URL('../docs/LANGUAGE.md', import.meta.url)), 'utf8');
    for (const c of Object.values(SKETCH_CODES)) expect(doc, c).toContain(`\`${c}`);
    for (const o of OPS) expect(doc, o.name).toContain(o.name);
  });
  test('the mapping table lists every operation the machine implements (machine/ops), with its PTX instruction', async () => {
    const { OPC } = await import('../src/machine/ops/index.js');
    const doc = readFileSync(fileURLToPath(new URL('../docs/LANGUAGE.md', import.meta.url)), 'utf8');
    const table = doc.slice(doc.indexOf('### Mapping to PTX, at a glance'), doc.indexOf('## 8. Diagnostics'));
    const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| PTX mnemonic') && !l.startsWith('|---'));
    // The IR column (the third; `same` repeats the column before it) names each operation of the
    // operation table once at least.
    const irColumn = rows.map((l) => {
      const [ptx, sketch, ir] = l.slice(2, -2).split(' | ') as [string, string, string];
      const sk = sketch.startsWith('same') ? `${ptx} ${sketch}` : sketch;
      return ir.startsWith('same') ? `${sk} ${ir}` : ir;
    }).join(' ');
    const missing = Object.keys(OPC).filter((op) => !irColumn.includes(`\`${op}\``));
    expect(missing).toEqual([]);
    // Every row says which PTX instruction it is (or `—` for what PTX has no instruction for).
    for (const l of rows) expect(l.split(' | ')[0]!.slice(2).trim(), l).toMatch(/^(`|— )/);
  });
});

describe('PTX qualifier spellings of the mbarrier instructions', () => {
  const sketch = (line: string) => `kernel q arch=sm_90a\nbarrier b[1] count=1 manual\nrole r warps=1 per=one:\n    ${line}\n`;
  test.each([
    ['mbarrier.init.shared::cta.b64 b[0], 1', 'mbarrier.init'],
    ['mbarrier.init.b64 b[0], 1', 'mbarrier.init'],
    ['mbarrier.inval.shared.b64 b[0]', 'mbarrier.inval'],
    ['mbarrier.arrive.release.cluster.shared::cluster.b64 b[0]', 'mbarrier.arrive'],
    ['mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 b[0], 16', 'mbarrier.arrive'],
    ['mbarrier.expect_tx.relaxed.cta.shared::cta.b64 b[0], 16', 'mbarrier.expect_tx'],
    ['mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 b[0], 16', 'mbarrier.complete_tx'],
    ['mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 b[0], 0', 'mbarrier.wait'],
    ['mbarrier.test_wait.parity.shared::cta.b64 b[0], 0', 'mbarrier.wait'],
  ])('%s parses as %s', (line, op) => {
    const r = parseSketch(sketch(line), 'q.mbk');
    expect(r.diagnostics.map((d) => d.message)).toEqual([]);
    const st = r.kernel!.roles[0]!.body[0]!;
    expect(st.s === 'op' && st.op.op).toBe(op);
  });
  test('an arrive and a wait keep their semantics and scope; a wrong qualifier says why', () => {
    const a = parseSketch(sketch('mbarrier.arrive.relaxed.cluster.shared::cluster.b64 b[0]'), 'q.mbk').kernel!.roles[0]!.body[0]!;
    expect(a.s === 'op' && a.op.op === 'mbarrier.arrive' && [a.op.sem, a.op.scope]).toEqual(['relaxed', 'cluster']);
    const w = parseSketch(sketch('mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 b[0], 0'), 'q.mbk').kernel!.roles[0]!.body[0]!;
    expect(w.s === 'op' && w.op.op === 'mbarrier.wait' && [w.op.sem, w.op.scope]).toEqual(['relaxed', 'cluster']);
    const bad = (line: string) => parseSketch(sketch(line), 'q.mbk').diagnostics.map((d) => [d.code, d.line, d.col, d.hint]);
    expect(bad('mbarrier.init.acquire.b64 b[0], 1')).toEqual([['E-unknown-mnemonic', 4, 5, 'mbarrier.init takes no memory-ordering qualifier (PTX ISA §9.7.13.15)']]);
    expect(bad('mbarrier.try_wait.parity.shared::cluster.b64 b[0], 0')[0]![3]).toBe('mbarrier.try_wait.parity operates on .shared or .shared::cta only, not .shared::cluster (PTX ISA §9.7.13.15)');
    expect(bad('mbarrier.arrive.acquire.cta.b64 b[0]')[0]![3]).toBe('mbarrier.arrive takes .release or .relaxed, not .acquire (PTX ISA §9.7.13.15)');
    expect(bad('mbarrier.arrive.noComplete.relaxed.cta.b64 b[0], 1')[0]![3]).toMatch(/takes \.release, not \.relaxed/);
    expect(bad('n = mbarrier.pending_count.shared.b64 t')[0]![3]).toMatch(/takes no state space: write mbarrier.pending_count.b64/);
    expect(bad('fence.acq_rel')[0]![3]).toMatch(/needs a scope/);
    expect(bad('fence.acq_rel b[0]')[0]![3]).toMatch(/needs a scope/);
    expect(bad('barrier.cluster.wait.relaxed')[0]![3]).toBe('barrier.cluster.wait takes only .acquire, not .relaxed (PTX ISA §9.7.13.3)');
    expect(bad('bar.red 0')[0]![3]).toMatch(/not modeled/);
  });
  /** Spellings as they appear in real PTX (nvcc output for CUTLASS, FlashAttention-3, DeepGEMM, ThunderKittens; the CCCL cuda::ptx wrappers; PTX ISA §9.7.13.15 syntax). */
  const REAL: [string, string, Record<string, unknown>][] = [
    ['mbarrier.init.shared::cta.b64 b[0], 1', 'mbarrier.init', {}],
    ['mbarrier.init.shared.b64 b[0], 1', 'mbarrier.init', {}],
    ['mbarrier.inval.shared::cta.b64 b[0]', 'mbarrier.inval', {}],
    ['_ = mbarrier.arrive.shared::cta.b64 b[0]', 'mbarrier.arrive', {}],
    ['t = mbarrier.arrive.shared.b64 b[0]', 'mbarrier.arrive', { token: 't' }],
    ['_ = mbarrier.arrive.shared::cluster.b64 b[0]@1', 'mbarrier.arrive', {}],
    ['_ = mbarrier.arrive.release.cta.shared::cta.b64 b[0]', 'mbarrier.arrive', { sem: 'release', scope: 'cta' }],
    ['_ = mbarrier.arrive.release.cluster.shared::cluster.b64 b[0]@1', 'mbarrier.arrive', { sem: 'release', scope: 'cluster' }],
    ['_ = mbarrier.arrive.relaxed.cluster.shared::cluster.b64 b[0]@1', 'mbarrier.arrive', { sem: 'relaxed', scope: 'cluster' }],
    ['_ = mbarrier.arrive.shared::cta.b64 b[0], 2', 'mbarrier.arrive', {}],
    ['_ = mbarrier.arrive.expect_tx.shared::cta.b64 b[0], 4096', 'mbarrier.arrive', {}],
    ['_ = mbarrier.arrive.expect_tx.shared::cluster.b64 b[0]@1, 4096', 'mbarrier.arrive', {}],
    ['_ = mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 b[0], 4096', 'mbarrier.arrive', { sem: 'release', scope: 'cta' }],
    ['_ = mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 b[0]@1, 16', 'mbarrier.arrive', { sem: 'release', scope: 'cluster' }],
    ['_ = mbarrier.arrive.expect_tx.relaxed.cluster.shared::cta.b64 b[0], 16', 'mbarrier.arrive', { sem: 'relaxed', scope: 'cluster' }],
    ['t = mbarrier.arrive.noComplete.shared.b64 b[0], 1', 'mbarrier.arrive', { noComplete: true }],
    ['t = mbarrier.arrive.noComplete.release.cta.shared::cta.b64 b[0], 1', 'mbarrier.arrive', { noComplete: true, sem: 'release', scope: 'cta' }],
    ['_ = mbarrier.arrive_drop.shared::cta.b64 b[0]', 'mbarrier.arrive', { drop: true }],
    ['_ = mbarrier.arrive_drop.release.cluster.shared::cluster.b64 b[0]@1', 'mbarrier.arrive', { drop: true, scope: 'cluster' }],
    ['_ = mbarrier.arrive_drop.expect_tx.shared::cta.b64 b[0], 16', 'mbarrier.arrive', { drop: true }],
    ['mbarrier.expect_tx.shared::cta.b64 b[0], 16', 'mbarrier.expect_tx', {}],
    ['mbarrier.expect_tx.relaxed.cta.shared::cta.b64 b[0], 16', 'mbarrier.expect_tx', {}],
    ['mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 b[0]@1, 16', 'mbarrier.expect_tx', {}],
    ['mbarrier.complete_tx.shared::cluster.relaxed.cluster.b64 b[0], 16', 'mbarrier.complete_tx', {}],
    ['mbarrier.complete_tx.relaxed.cta.shared::cta.b64 b[0], 16', 'mbarrier.complete_tx', {}],
    ['mbarrier.try_wait.parity.shared::cta.b64 b[0], 0', 'mbarrier.wait', { form: 'try_wait' }],
    ['mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 b[0], 0', 'mbarrier.wait', { sem: 'acquire', scope: 'cta' }],
    ['mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 b[0], 0', 'mbarrier.wait', { sem: 'acquire', scope: 'cluster' }],
    ['mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 b[0], 0', 'mbarrier.wait', { sem: 'relaxed', scope: 'cluster' }],
    ['p = mbarrier.test_wait.parity.shared::cta.b64 b[0], 1', 'mbarrier.wait', { form: 'test_wait', dest: 'p' }],
    ['p = mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 b[0], 1', 'mbarrier.wait', { form: 'test_wait', scope: 'cluster' }],
    ['mbarrier.try_wait.shared.b64 b[0], t', 'mbarrier.wait', { token: 't' }],
    ['mbarrier.try_wait.acquire.cta.shared::cta.b64 b[0], t', 'mbarrier.wait', { token: 't', sem: 'acquire' }],
    ['p = mbarrier.test_wait.relaxed.cluster.shared::cta.b64 b[0], t', 'mbarrier.wait', { token: 't', sem: 'relaxed' }],
    ['n = mbarrier.pending_count.b64 t', 'mbarrier.pending_count', {}],
    ['fence.mbarrier_init.release.cluster', 'fence.mbarrier_init', {}],
  ];
  test.each(REAL)('real PTX spelling %s', (line, op, fields) => {
    const src = `kernel q arch=sm_90a cluster=2\nbarrier b[1] count=1 manual\nrole r warps=1 per=one:\n    t = mbarrier.arrive b[0]\n    ${line}\n`;
    const r = parseSketch(src, 'q.mbk');
    expect(r.diagnostics.map((d) => d.message)).toEqual([]);
    const st = r.kernel!.roles[0]!.body[1]!;
    expect(st.s === 'op' && st.op.op).toBe(op);
    if (st.s === 'op') expect(st.op).toMatchObject(fields);
    // The sink `_` keeps no token (and declares no variable `_`).
    if (line.startsWith('_ =') && st.s === 'op') expect(st.op).not.toHaveProperty('token');
  });
});
