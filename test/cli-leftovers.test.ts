/**
 * What a new user's trial of the packed CLI found: a `--max-memory` below mbsim's own footprint,
 * a PTX file with no kernel, a binary file's echoed line, error codes in `--json`, the CUDA line
 * of a hang's cause, Ctrl-C during `--sweep` and `--all-trips`.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';

const root = join(__dirname, '..');
let pkg = '';
let bin = '';

// The bundled command (scripts/bundle.mjs, into a temporary package folder): what a user runs.
beforeAll(() => {
  pkg = mkdtempSync(join(tmpdir(), 'mbsim-leftovers-pkg-'));
  copyFileSync(join(root, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(root, 'examples'), join(pkg, 'examples'));
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs'), join(pkg, 'dist', 'bin')], { cwd: root, stdio: 'pipe' });
  bin = join(pkg, 'dist', 'bin', 'mbsim.cjs');
}, 300_000);

afterAll(() => {
  if (pkg) rmSync(pkg, { recursive: true, force: true });
});
// A loaded machine starts node slowly: each test spawns the CLI a few times.
vi.setConfig({ testTimeout: 240_000 });
const dir = mkdtempSync(join(tmpdir(), 'mbsim-leftovers-'));
const file = (name: string, text: string | Buffer): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
/** Runs the bundled CLI; stdout, stderr and the exit code. */
const mbsim = (...args: string[]): { out: string; err: string; code: number } => {
  try {
    const out = execFileSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', MBSIM_CACHE_DIR: join(pkg, 'cache') } });
    return { out, err: '', code: 0 };
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; status?: number };
    return { out: x.stdout ?? '', err: x.stderr ?? '', code: x.status ?? -1 };
  }
};

describe('--max-memory below what mbsim itself holds', () => {
  test('check: exit 2 naming the least value that leaves the search room (it was an incomplete with 0 states, exit 3)', () => {
    const r = mbsim('check', 'examples/pipeline.mbk', '--max-memory', '10');
    expect(r.code).toBe(2);
    const m = /^mbsim: error: --max-memory 10 MB is below what mbsim itself holds before the check starts \((\d+) MB: Node's runtime, mbsim's code and the kernel\): the bound counts the whole process, so the check would stop at once with nothing done; give more than (\d+) \(the default is 2048\)$/m.exec(r.err);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(10);
    expect(m![2]).toBe(m![1]);
    expect(r.out).toBe('');
  });
  test('check --json: the mbsim.error/1 document, exit 2', () => {
    const r = mbsim('check', 'examples/pipeline.mbk', '--max-memory', '10', '--json');
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.out) as { exitCode: number; message: string };
    expect(doc.exitCode).toBe(2);
    expect(doc.message).toMatch(/^--max-memory 10 MB is below what mbsim itself holds/);
  });
  test('run: half the bound is the records\' share, so the least value is twice the footprint', () => {
    const r = mbsim('run', 'examples/pipeline.mbk', '--max-memory', '20');
    expect(r.code).toBe(2);
    const m = /holds before the simulation starts \((\d+) MB: .*of which the simulation's records may fill 50%, so the simulation would stop at once with nothing done; give more than (\d+) /.exec(r.err);
    expect(m).not.toBeNull();
    expect(Number(m![2])).toBe(2 * Number(m![1]));
  });
  test('a bound above the footprint still checks', () => {
    const r = mbsim('check', 'examples/pipeline.mbk', '--max-memory', '400');
    expect(r.code).toBe(0);
    expect(r.out).toContain('every schedule explored');
  });
});

describe('a PTX file without a kernel is an error at its end', () => {
  test.each([
    ['empty.ptx', '', '1:1', 'the file is empty'],
    ['comments.ptx', '// a comment\n/* another */\n\n', '2:14', 'the file has no .entry'],
    ['header.ptx', '.version 8.0\n.target sm_90a\n.address_size 64\n', '3:17', 'the file has no .entry'],
    ['decl.ptx', '.version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k();\n', '4:21', 'its .entry declarations have no body'],
  ])('%s', (name, text, at, what) => {
    const path = file(name, text);
    for (const verb of ['check', 'run']) {
      const r = mbsim(verb, path);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')[0]).toBe(`${path}:${at}: error[E-ptx-no-entry]: no kernel to run: ${what}`);
      expect(r.err).toContain('\nhint: mbsim reads the PTX of a CUDA kernel');
    }
    const j = mbsim('check', path, '--json');
    const doc = JSON.parse(j.out) as { diagnostics: { code: string; line: number; col: number }[] };
    expect(doc.diagnostics[0]).toMatchObject({ code: 'E-ptx-no-entry', line: Number(at.split(':')[0]), col: Number(at.split(':')[1]) });
  });
  test('an empty sketch: E-missing-kernel at 1:1', () => {
    const r = mbsim('check', file('empty.mbk', ''));
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toMatch(/empty\.mbk:1:1: error\[E-missing-kernel\]: the sketch has no kernel declaration$/);
  });
});

describe('a binary file\'s echoed line: one escape form, the caret under its column', () => {
  // An ELF header: DEL, C0 controls, NULs and a byte that is not UTF-8 (0xe0 before 'a').
  const elf = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x03, 0x00, 0xe0, 0x61, 0x00, 0x0a]);
  test('sketch: the first NUL, every control and the bad byte as \\uHHHH', () => {
    const r = mbsim('check', file('bin.mbk', elf));
    expect(r.code).toBe(2);
    const rows = r.err.split('\n');
    expect(rows[0]).toMatch(/bin\.mbk:1:8: error\[E-bad-char\]: a NUL character \(U\+0000\): this is a binary file/);
    expect(rows[1]).toBe('  \\u007fELF\\u0002\\u0001\\u0001\\u0000\\u0000\\u0003\\u0000\\ufffda\\u0000');
    // Column 8 is the first NUL: the caret sits under its escape's backslash.
    expect(rows[2]).toBe(`  ${' '.repeat('\\u007fELF\\u0002\\u0001\\u0001'.length)}^`);
    expect(rows[1]!.slice(rows[2]!.indexOf('^'))).toMatch(/^\\u0000/);
    expect(r.err).not.toMatch(/\\x[0-9a-f]{2}|\ufffd|[\u0000-\u0008\u007f]/);
  });
  test('PTX: the same line, and the character named by its code point', () => {
    const r = mbsim('check', file('bin.ptx', elf));
    expect(r.code).toBe(2);
    const rows = r.err.split('\n');
    expect(rows[0]).toMatch(/bin\.ptx:1:1: error\[E-ptx-lex\]: unexpected character '\\u007f' \(U\+007F\)$/);
    expect(rows[1]).toBe('  \\u007fELF\\u0002\\u0001\\u0001\\u0000\\u0000\\u0003\\u0000\\ufffda\\u0000');
    expect(rows[2]).toBe('  ^');
  });
});

describe('--json: a timing file\'s and a PTX launch value\'s errors carry a stable code', () => {
  const codeOf = (r: { out: string }): string | undefined => (JSON.parse(r.out) as { diagnostics: { code?: string }[] }).diagnostics[0]!.code;
  test.each([
    ['{"bogus": 1}', 'E-timing-unknown'],
    ['{', 'E-timing-json'],
    ['{"tmaLatency": 1,\n "tmaLatency": 2}', 'E-timing-duplicate'],
    ['{"tmaLatency": -3}', 'E-timing-value'],
    ['{"clockMHz": {"x": 1}}', 'E-timing-value'],
  ])('--timing %j: %s, in the text too', (text, code) => {
    const t = file(`timing-${code}.json`, text);
    const r = mbsim('run', 'examples/pipeline.mbk', '--timing', t, '--json');
    expect(r.code).toBe(2);
    expect(codeOf(r)).toBe(code);
    expect(r.err.split('\n')[0]).toContain(`: error[${code}]: `);
  });
  const ptx = 'examples/ptx/tma_pipeline.ptx';
  test.each([
    [['--param', 'nope=3'], 'E-ptx-param'],
    [['--tensor-map', 'nope=3'], 'E-ptx-param'],
    [['--param', 'param_2=x'], 'E-ptx-param-value'],
    [['--tensor-map', 'param_0=0'], 'E-ptx-param-value'],
  ])('%j: %s', (flags, code) => {
    const r = mbsim('check', ptx, ...flags, '--json');
    expect(r.code).toBe(2);
    expect(codeOf(r)).toBe(code);
  });
  test('a parameter the kernel needs without a value: E-ptx-param-missing at its first use', () => {
    // The file without its launch sidecar: no value for param_2.
    const bare = file('bare.ptx', readFileSync(join(root, ptx), 'utf8'));
    const r = mbsim('check', bare, '--kernel', 'tma_pipeline', '--block', '128', '--tensor-map', 'param_0=16384', '--json');
    expect(r.code).toBe(2);
    const d = (JSON.parse(r.out) as { diagnostics: { code?: string; line?: number; message: string }[] }).diagnostics[0]!;
    expect(d).toMatchObject({ code: 'E-ptx-param-missing', line: 49 });
    expect(d.message).toMatch(/^kernel parameter param_2 has no value/);
  });
});

describe('a PTX hang\'s cause line names the CUDA lines, as its `at` lines do', () => {
  test('tma_pipeline.expect_tx.ptx (-lineinfo): text and --format short', () => {
    const ptx = 'examples/ptx/tma_pipeline.expect_tx.ptx';
    const text = mbsim('check', ptx);
    expect(text.code).toBe(1);
    expect(text.out).toContain('   cause (tx-mismatch at lines 147 (tma_pipeline.cu:37) and 199 (tma_pipeline.cu:16, inlined at tma_pipeline.cu:47)): phase 0 of full[0] expects 1024 more bytes');
    expect(text.out).toContain(`${ptx}:147:2 (tma_pipeline.cu:37)`);
    const short = mbsim('check', ptx, '--format', 'short');
    expect(short.out).toContain('; cause (tx-mismatch at lines 147 (tma_pipeline.cu:37) and 199 (tma_pipeline.cu:16, inlined at tma_pipeline.cu:47)): ');
  });
});

describe('Ctrl-C during --sweep: the rows finished, the rest not checked, exit 130', () => {
  test('SIGINT after the first rows of pipeline.mbk K=1..60 at CTAS=2', async () => {
    const { spawn } = await import('node:child_process');
    const ended = await new Promise<{ code: number | null; out: string }>((done) => {
      const p = spawn(process.execPath, [bin, 'check', 'examples/pipeline.mbk', '--sweep', 'K=1..60', '--set', 'CTAS=2', '--timeout', '600'], { cwd: root, env: { ...process.env, NO_COLOR: '1', MBSIM_CACHE_DIR: join(pkg, 'cache') } });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', () => {});
      // Node's start takes seconds on a loaded machine (a signal before it ends the process at once);
      // row K takes about K / 6 s (the 60 rows, minutes): the signal comes while rows remain.
      const timer = setTimeout(() => p.kill('SIGINT'), 10_000);
      const guard = setTimeout(() => p.kill('SIGKILL'), 200_000);
      p.on('close', (code) => {
        clearTimeout(timer);
        clearTimeout(guard);
        done({ code, out });
      });
    });
    expect(ended.code).toBe(130);
    const rows = ended.out.split('\n').filter((l) => /^\d+ {2}/.test(l));
    expect(rows).toHaveLength(60);
    const done = rows.filter((l) => !l.includes('not checked: interrupted'));
    expect(done.length).toBeGreaterThanOrEqual(1);
    expect(done.length).toBeLessThan(60);
    expect(done.every((l) => /^\d+\s+ok\s/.test(l))).toBe(true);
    expect(rows.slice(done.length).every((l) => /incomplete\s+0\s+not checked: interrupted$/.test(l))).toBe(true);
    expect(ended.out).toContain(`${done.length} ok, ${60 - done.length} incomplete; interrupted\n`);
  });
});
