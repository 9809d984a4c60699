import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { expect, test } from 'vitest';
import { VERB_NAMES, VERBS } from '../src/cli/commands.js';
import { main } from '../src/cli/main.js';

/**
 * `main` registers only the verb a run names (src/cli/main.ts): the names it looks the verb up by
 * are the verbs' own, and a verb's help and errors are the same as with every verb registered.
 */
test('VERB_NAMES names VERBS, in order', () => {
  const program = new Command();
  const ctx = { io: { out: () => {}, err: () => {}, color: false }, started: 0, exit: () => {} } as never;
  for (const v of VERBS) v(program, ctx);
  expect(program.commands.map((c) => c.name())).toEqual([...VERB_NAMES]);
});

/** What `main` prints and returns for `argv`. */
async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s: string) => (out += s), err: (s: string) => (err += s), color: false } as never);
  return { code, out, err };
}

test('a verb prints the same help and usage errors whether it is named first or not', async () => {
  for (const verb of VERB_NAMES) {
    // `help VERB` registers every verb; `VERB --help` only that one.
    expect(await cli([verb, '--help'])).toEqual(await cli(['help', verb]));
  }
  const bad = await cli(['check', '--no-such-flag', 'pipeline']);
  expect(bad.code).toBe(2);
  expect(bad.err).toMatch(/unknown option '--no-such-flag'/);
  const typo = await cli(['chek', 'pipeline']);
  expect(typo.code).toBe(2);
  expect(typo.err).toMatch(/Did you mean check\?/);
  expect((await cli(['--help'])).out).toMatch(/^ {2}lsp /m);
});

test('an unknown option: a close option of the verb, the verb\'s name for a common bound, or the verbs that have it', async () => {
  const hint = async (argv: string[]) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    return r.err.trimEnd();
  };
  // commander offered --omit for run --format; run has no close option, check has --format.
  expect(await hint(['run', 'mechanism', '--format', 'short'])).toBe("mbsim: error: unknown option '--format'\n(--format is an option of check, not of run)");
  expect(await hint(['run', 'mechanism', '--max-seconds', '3'])).toBe("mbsim: error: unknown option '--max-seconds'\n(Did you mean --timeout?)");
  expect(await hint(['check', 'mechanism', '--time-limit=3'])).toBe("mbsim: error: unknown option '--time-limit=3'\n(Did you mean --timeout?)");
  expect(await hint(['check', 'mechanism', '--max-mem', '64'])).toBe("mbsim: error: unknown option '--max-mem'\n(Did you mean --max-memory?)");
  expect(await hint(['check', 'mechanism', '--max-state', '9'])).toBe("mbsim: error: unknown option '--max-state'\n(Did you mean --max-states?)");
  expect(await hint(['check', 'mechanism', '--events'])).toBe("mbsim: error: unknown option '--events'\n(--events is an option of run, not of check)");
  expect(await hint(['run', 'mechanism', '--bogus'])).toBe("mbsim: error: unknown option '--bogus'");
  // An alias whose target the verb lacks is not offered (decode has no --timeout).
  expect(await hint(['decode', '0', '--max-seconds', '3'])).toBe("mbsim: error: unknown option '--max-seconds'");
});

test('help shows no internal default of a repeatable flag; the flags still collect their values', async () => {
  for (const verb of ['run', 'check', 'serve']) {
    const help = (await cli([verb, '--help'])).out;
    expect(help).not.toMatch(/\(default: (\{\}|\[\])\)/);
  }
  const ok = await cli(['check', 'pipeline', '--set', 'K=2', '--set', 'S=2', '--format', 'short']);
  expect(ok.code).toBe(0);
  expect(ok.out).toMatch(/^mbsim check pipeline: OK/m);
  const twice = await cli(['check', 'pipeline', '--set', 'K=2', '--set', 'K=3']);
  expect(twice.code).toBe(2);
  expect(twice.err).toMatch(/--set K is given twice/);
  const sweep = await cli(['check', 'pipeline', '--set', 'K=2', '--sweep', 'S=1..2']);
  expect(sweep.code).toBe(0);
  expect(sweep.out).toMatch(/2 combinations/);
  const none = await cli(['run', 'mechanism', '--json', '--omit', 'events,spans,ledger']);
  expect(none.code).toBe(0);
  expect(JSON.parse(none.out).verdict).toBe('ok');
});

test('mbsim info shows a scalar barrier or buffer by its name, an array with its length', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-info-'));
  try {
    const file = join(dir, 'tiny.mbk');
    writeFileSync(file, 'kernel tiny arch=sm_100a\nbarrier full count=1\nbarrier ring[2] count=1\nsmem tile bytes=4096\nsmem stage[2] bytes=1024\nrole p warps=1 per=one:\n    mbarrier.arrive.expect_tx full, 4096\n    cp.async.bulk.tensor tile, 4096, full\n    mbarrier.arrive ring[0]\n    ld.shared stage[1]\nrole c warps=1 per=one:\n    mbarrier.try_wait.parity full, 0\n    ld.shared tile\n');
    const r = await cli(['info', file]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {2}barrier full count=1$/m);
    expect(r.out).toMatch(/^ {2}barrier ring\[2\] count=1$/m);
    expect(r.out).toMatch(/^ {2}smem tile of 4096 bytes$/m);
    expect(r.out).toMatch(/^ {2}smem stage\[2\] of 1024 bytes$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("docs/CHECK.md's --format short example is what the command prints (up to each line's '…'), and bad input leaves stdout empty", async () => {
  const doc = readFileSync(join(__dirname, '..', 'docs', 'CHECK.md'), 'utf8');
  const block = /- `--format short`[^\n]*\n\n {2}```\n([\s\S]*?)\n {2}```/.exec(doc)![1]!.split('\n').map((l) => l.trim());
  expect(block.length).toBe(3);
  const r = await cli(['check', 'examples/bugs/B10.mbk', '--format', 'short']);
  expect(r.code).toBe(1);
  const lines = r.out.trimEnd().split('\n');
  for (const want of block) {
    const head = want.split('…')[0]!;
    expect(lines.some((l) => (want.includes('…') ? l.startsWith(head) : l === want)), want).toBe(true);
  }
  for (const format of [['--json'], ['--format', 'short'], ['--quiet']]) {
    const bad = await cli(['check', 'no-such-file.mbk', ...format]);
    expect(bad.code).toBe(2);
    // With --json stdout gets the error document only (docs/CHECK.md, "Input errors with --json").
    if (format[0] === '--json') expect(JSON.parse(bad.out)).toMatchObject({ schema: 'mbsim.error/1', exitCode: 2 });
    else expect(bad.out).toBe('');
    expect(bad.err).toMatch(/^mbsim: error: cannot read sketch file no-such-file\.mbk: no such file$/m);
  }
});

test.skipIf(!existsSync('/usr/bin/script') || process.platform !== 'linux')('mbsim lsp started in a terminal says what it is on stderr; under an editor (a pipe) it prints nothing', () => {
  const repo = join(__dirname, '..');
  const cmd = `${process.execPath} --import ./test/support/ts-register.mjs src/cli/bin.ts lsp`;
  // script(1) gives the command a pseudo-terminal; the timeout ends the server, which waits for input.
  const tty = spawnSync('script', ['-qec', `timeout 8 ${cmd}`, '/dev/null'], { cwd: repo, encoding: 'utf8', timeout: 30_000 });
  expect(tty.stdout).toMatch(/mbsim lsp: a language server; it talks LSP \(JSON-RPC\) over stdin\/stdout/);
  const piped = spawnSync(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/cli/bin.ts', 'lsp'], { cwd: repo, encoding: 'utf8', input: '', timeout: 30_000 });
  expect(piped.stderr).toBe('');
  expect(piped.stdout).toBe('');
}, 60_000);

test('check --format short prints a sketch\'s errors one line each (file:line:col: error[code]: message); the text format keeps the source line and caret', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-short-'));
  try {
    const file = join(dir, 'bad.mbk');
    writeFileSync(file, 'kernel k\nbarrier b count=0\nbarrier c count=0\n');
    const short = await cli(['check', file, '--format', 'short']);
    expect(short.code).toBe(2);
    expect(short.out).toBe('');
    const lines = short.err.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const [i, l] of lines.entries()) expect(l).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:${i + 2}:17: error\\[E-init-count\\]: init count 0 of barrier [bc] is outside`));
    const text = await cli(['check', file]);
    expect(text.code).toBe(2);
    expect(text.err).toMatch(/\n {2}barrier b count=0\n {18}\^/);
    expect(text.err).toMatch(/^hint: /m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a parameter that makes an init count 0, negative or past 2^20 - 1 (--set C=0) is refused like the literal: file:line:col, caret, exit 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-count-'));
  try {
    const file = join(dir, 'c.mbk');
    writeFileSync(file, 'kernel k\nparam C = 1\nbarrier b count=C\nrole p warps=1 per=one:\n    mbarrier.arrive b\n');
    for (const v of ['0', '-1', '1048576']) {
      const r = await cli(['check', file, '--set', `C=${v}`]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(`${file}:3:1: error[init-count]: init count of barrier b is C = ${v}; an mbarrier expects 1 to 1,048,575 (2^20 - 1) arrivals per phase`);
      expect(r.err).toMatch(/\n {2}barrier b count=C\n {2}\^~+/);
    }
    expect((await cli(['check', file, '--set', 'C=1'])).code).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test("a checkout's example path (README.md's `mbsim check examples/bugs/B01.mbk`) run from elsewhere names the package's copy", async () => {
  const { noSuchFile, examplesDir } = await import('../src/cli/load.js');
  const away = mkdtempSync(join(tmpdir(), 'mbsim-away-'));
  try {
    const msg = noSuchFile('examples/bugs/B01.mbk', away);
    expect(msg.startsWith('cannot read sketch file examples/bugs/B01.mbk: no such file (the package\'s examples are in ')).toBe(true);
    // The path it names is the package's own file, readable from where the command ran.
    const named = /: (\S+)\)$/.exec(msg)![1]!;
    expect(readFileSync(resolve(away, named), 'utf8')).toBe(readFileSync(join(examplesDir(), 'bugs', 'B01.mbk'), 'utf8'));
    expect(noSuchFile('./examples/pipeline.mbk', away)).toMatch(/examples are in .*pipeline\.mbk\)$/);
    // Nothing to point at: the plain message.
    expect(noSuchFile('examples/bugs/B99.mbk', away)).toBe('cannot read sketch file examples/bugs/B99.mbk: no such file');
    expect(noSuchFile('examples/../package.json', away)).toBe('cannot read sketch file examples/../package.json: no such file');
    expect(noSuchFile('mine.mbk', away)).toBe('cannot read sketch file mine.mbk: no such file');
    expect(noSuchFile('k.ptx', away, 'PTX file')).toBe('cannot read PTX file k.ptx: no such file');
  } finally {
    rmSync(away, { recursive: true, force: true });
  }
  // In the CLI: the same line, exit 2.
  const bad = await cli(['check', 'examples/bugs/B99.mbk']);
  expect(bad.code).toBe(2);
  expect(bad.err).toMatch(/^mbsim: error: cannot read sketch file examples\/bugs\/B99\.mbk: no such file$/m);
});

test('check --watch of a built-in example names its sketch to copy; of a missing file, what run and check say', async () => {
  const ex = await cli(['check', 'pipeline', '--watch']);
  expect(ex.code).toBe(2);
  const { examplesDir } = await import('../src/cli/load.js');
  expect(ex.err.trimEnd()).toBe(`mbsim: error: --watch needs a sketch file: 'pipeline' is a built-in example; copy its sketch (${join(examplesDir(), 'pipeline.mbk')}) and watch the copy`);
  const missing = await cli(['check', 'nowhere.mbk', '--watch']);
  expect(missing.code).toBe(2);
  expect(missing.err.trimEnd()).toBe('mbsim: error: cannot read sketch file nowhere.mbk: no such file');
});

test('info takes a PTX file or a sketch, and its usage lines say so', async () => {
  expect((await cli(['info', '--help'])).out).toMatch(/^Usage: mbsim info \[options\] <file\.ptx\|file\.mbk>$/m);
  expect((await cli(['--help'])).out).toMatch(/^ {2}info <file\.ptx\|file\.mbk> +list a PTX module's kernels/m);
  const sketch = await cli(['info', 'examples/pipeline.mbk']);
  expect([sketch.code, sketch.err]).toEqual([0, '']);
  expect(sketch.out).toMatch(/^examples\/pipeline\.mbk: sketch, kernel 'pipeline'/);
});

test('a missing input file: one wording for every verb and kind of file (sketch, PTX, timing), exit 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-missing-'));
  const cases: [string[], string][] = [
    [['run', join(dir, 'm.mbk')], `cannot read sketch file ${join(dir, 'm.mbk')}: no such file`],
    [['check', join(dir, 'm.mbk')], `cannot read sketch file ${join(dir, 'm.mbk')}: no such file`],
    [['info', join(dir, 'm.mbk')], `cannot read sketch file ${join(dir, 'm.mbk')}: no such file`],
    [['serve', join(dir, 'm.mbk'), '--port', '0'], `cannot read sketch file ${join(dir, 'm.mbk')}: no such file`],
    [['run', join(dir, 'm.ptx')], `cannot read PTX file ${join(dir, 'm.ptx')}: no such file`],
    [['check', join(dir, 'm.ptx')], `cannot read PTX file ${join(dir, 'm.ptx')}: no such file`],
    [['info', join(dir, 'm.ptx')], `cannot read PTX file ${join(dir, 'm.ptx')}: no such file`],
    [['serve', join(dir, 'm.ptx'), '--port', '0'], `cannot read PTX file ${join(dir, 'm.ptx')}: no such file`],
    [['run', 'mechanism', '--timing', join(dir, 't.json')], `cannot read timing file ${join(dir, 't.json')}: no such file`],
  ];
  for (const [argv, want] of cases) {
    const r = await cli(argv);
    expect([argv[0], r.code, r.err.trimEnd()]).toEqual([argv[0], 2, `mbsim: error: ${want}`]);
  }
});

test("run's hint names the check of the same kernel: --set and a PTX file's launch flags, quoted for the shell", async () => {
  const { checkCommand } = await import('../src/cli/run-report.js');
  expect(checkCommand('k.mbk', { set: { N: 2, S: 3 }, grid: 4 })).toBe('mbsim check k.mbk --set N=2 --set S=3');
  expect(checkCommand('my dir/k.ptx', { set: {}, kernel: 'gemm', block: [64, 2], cluster: 2, grid: 4, param: { param_2: 4 }, tensorMap: { param_0: 16384 }, dynamicSmem: 1024 }))
    .toBe("mbsim check 'my dir/k.ptx' --kernel gemm --block 64,2 --cluster 2 --grid 4 --param param_2=4 --tensor-map param_0=16384 --dynamic-smem 1024");
  expect(checkCommand("it's.mbk", { set: {} })).toBe(`mbsim check 'it'\\''s.mbk'`);
});

test("the CLI's modules import no node: module dynamically (the bundle, run from V8's code cache, has no dynamic import callback: 'check pipeline --watch' was an internal error there)", () => {
  const found: string[] = [];
  for (const dir of ['cli', 'lsp']) {
    const folder = join(__dirname, '..', 'src', dir);
    for (const f of readdirSync(folder).filter((n) => n.endsWith('.ts'))) {
      readFileSync(join(folder, f), 'utf8').split('\n').forEach((line, i) => {
        if (/\bimport\(\s*['"]node:/.test(line) && !/typeof import\(/.test(line)) found.push(`src/${dir}/${f}:${i + 1}: ${line.trim()}`);
      });
    }
  }
  expect(found).toEqual([]);
});
