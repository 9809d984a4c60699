/**
 * A property test of the whole CLI under adversarial invocations: random flags from the real flag
 * set (read from `--help`), odd values (huge, negative, NaN, empty, unicode and control characters,
 * `__proto__`) and odd paths (directories, links, FIFOs, devices, missing directories), against
 * small built-in examples. Every invocation must end with exit code 0..3, print no stack trace or
 * internal error and no raw control character, leave no temporary file, and leave every path that
 * was not a regular file (or missing) of the same type.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, constants, createReadStream, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';

/** Invocations per run of the suite (MBSIM_HOSTILE_RUNS=2000 for a longer trial). */
const RUNS = Number(process.env.MBSIM_HOSTILE_RUNS ?? 100);
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** A stack frame, Node's internals, or an Error class name: internal text that must not reach users. */
const INTERNAL = /^\s+at (?:\S+ \()?\S*\.(?:[cm]?js|ts):\d+:\d+\)?$|^\s+at \S+ \(\S*:\d+:\d+\)$|node:internal|file:\/\/|\b(?:Type|Range|Reference|Syntax|Eval|URI|Aggregate)?Error:/m;

const S = mkdtempSync(join(tmpdir(), 'mbsim-hostile-'));
const P = {
  file: join(S, 'file.json'),
  dir: join(S, 'dir'),
  linkFile: join(S, 'link-file'),
  linkDir: join(S, 'link-dir'),
  dangling: join(S, 'dangling'),
  loop: join(S, 'loop'),
  fifo: join(S, 'fifo'),
  missing: join(S, 'missing.json'),
  missingDir: join(S, 'no-such-dir', 'x.json'),
  sketch: join(S, 'k.mbk'),
  badSketch: join(S, 'bad.mbk'),
  timing: join(S, 'timing.json'),
  badTiming: join(S, 'proto.json'),
};

beforeAll(() => {
  writeFileSync(P.file, 'old');
  mkdirSync(P.dir);
  writeFileSync(join(S, 'target.json'), 'target');
  symlinkSync(join(S, 'target.json'), P.linkFile);
  symlinkSync(P.dir, P.linkDir);
  symlinkSync(join(S, 'nowhere', 'x'), P.dangling);
  symlinkSync(P.loop, P.loop);
  expect(spawnSync('mkfifo', [P.fifo]).status).toBe(0);
  writeFileSync(P.sketch, 'kernel k arch=sm_90a description="\u001b]0;t\u0007 d\u001b[2J\u202e"\nparam N = 2\nbarrier b[1] count=1\n\nrole r warps=1 per=one:\n    for i in range(0, N):\n        mbarrier.arrive b[0]\n        mbarrier.try_wait.parity b[0], i % 2\n');
  writeFileSync(P.badSketch, 'kernel k arch=sm_90a\nparam N = = =\nrole r warps=1 per=one:\n    work -1   # \u001b[2J\u0007\u202e\n');
  writeFileSync(P.timing, '{"tmaLatency": 700}');
  writeFileSync(P.badTiming, '{"__proto__": {"value": 1}, "toString": 1}');
});

/** The options of a verb, as its `--help` lists them: [flag, takes a value]. */
async function flagsOf(verb: string): Promise<[string, boolean][]> {
  const out: string[] = [];
  await main([verb, '--help'], { out: (s) => out.push(s), err: () => {}, color: false });
  const flags: [string, boolean][] = [];
  for (const line of out.join('\n').split('\n')) {
    const m = /^ {2}(?:-\w, )?(--[a-z][a-z-]*)( <[^>]+>)?/.exec(line);
    if (m && m[1] !== '--help') flags.push([m[1]!, m[2] !== undefined]);
  }
  return flags;
}

const odd = fc.constantFrom(
  '', ' ', '0', '1', '-1', '-100', '2', '3', '1.5', '1e308', 'NaN', 'Infinity', '-0', '0x10', '0b101', '1_000',
  '9007199254740991', '9007199254740992', '-9007199254740993', '9'.repeat(40), '__proto__', 'constructor',
  'é', '中文', '\u202eevil', '\u001b[2J', '\u0007', 'a'.repeat(300), '..', '/', 'consumer:bar:phase',
);
const outPath = fc.constantFrom(P.file, P.dir, P.linkFile, P.linkDir, P.dangling, P.loop, P.fifo, P.missing, P.missingDir, `${P.file}/`, `${P.dir}/`, '/dev/null', '/dev/full', '-', '');
const inPath = fc.constantFrom(P.timing, P.badTiming, P.dir, P.linkDir, P.missing, P.missingDir, P.file, '/dev/null', '');
const name = fc.constantFrom('BYTES', 'TRIPS', 'N', '__proto__', 'constructor', 'X', '', 'b\u001b');
const setValue = fc.tuple(name, odd).map(([n, v]) => `${n}=${v}`);
const sweepValue = fc.oneof(
  fc.tuple(name, odd, odd).map(([n, a, b]) => `${n}=${a}..${b}`),
  fc.tuple(name, fc.integer({ min: -3, max: 4 }), fc.integer({ min: 0, max: 3 })).map(([n, a, w]) => `${n}=${a}..${a + w}`),
);

/** Values a flag takes in normal use, so that most invocations get past parsing. */
const SANE: Record<string, string[]> = {
  '--seed': ['7'], '--width': ['40', '120'], '--max-steps': ['50', '5000'], '--max-states': ['10', '5000'],
  '--timeout': ['0.2', '1'], '--max-memory': ['1', '300'], '--phase-table': ['r:b:i'],
  '--set': ['BYTES=1024', 'TRIPS=2', 'N=3', 'N=0'], '--sweep': ['N=0..2', 'BYTES=1..2', 'TRIPS=0..1'],
};

function valueFor(flag: string): fc.Arbitrary<string> {
  if (flag === '--trace' || flag === '--sarif') return outPath;
  if (flag === '--timing') return inPath;
  const sane = fc.constantFrom(...(SANE[flag] ?? ['1']));
  const hostile = flag === '--set' ? fc.oneof(setValue, odd) : flag === '--sweep' ? fc.oneof(sweepValue, odd) : odd;
  return fc.oneof({ arbitrary: sane, weight: 3 }, { arbitrary: hostile, weight: 1 });
}

/** The file type of a path (not followed), and a link's target. */
function kind(p: string): string {
  try {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return `link:${readlinkSync(p)}`;
    return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isFIFO() ? 'fifo' : st.isCharacterDevice() ? 'char' : 'other';
  } catch {
    return 'missing';
  }
}

/** Reads the FIFO whenever someone writes it, until closed (then unblocks its own pending open). */
function fifoReader(path: string) {
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      await new Promise<void>((ok) => {
        createReadStream(path).on('data', () => {}).on('end', ok).on('error', () => ok());
      });
    }
  })();
  return async () => {
    stop = true;
    for (let i = 0; i < 500; i++) {
      if (await Promise.race([loop.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10))])) return;
      try {
        closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader open yet
      }
    }
    throw new Error('the FIFO reader did not finish');
  };
}

test('adversarial CLI invocations: exit 0..3, no stack trace, no temp file, no clobbered path', async () => {
  const verbs = { run: await flagsOf('run'), check: await flagsOf('check') };
  expect(verbs.run.map(([f]) => f)).toEqual(expect.arrayContaining(['--set', '--trace', '--timing', '--max-steps', '--json']));
  expect(verbs.check.map(([f]) => f)).toEqual(expect.arrayContaining(['--sweep', '--sarif', '--trace', '--timeout', '--max-memory']));
  // Worker threads start the TypeScript loader in each worker (seconds each): the parallel search's
  // bounds have their own tests.
  // `--watch` runs until interrupted (test/check-output.test.ts drives it in a child process).
  verbs.check = verbs.check.filter(([f]) => f !== '--workers' && f !== '--watch');
  const targets = fc.oneof(
    { arbitrary: fc.constantFrom('mechanism', 'examples/bugs/B01.mbk', P.sketch), weight: 4 },
    { arbitrary: fc.constantFrom(P.badSketch, P.linkFile, P.dir, P.missing, P.fifo, '', '\u202e'), weight: 1 },
  );
  const invocation = (verb: 'run' | 'check') => fc.tuple(
    targets,
    fc.array(fc.constantFrom(...verbs[verb]).chain(([f, takes]): fc.Arbitrary<string[]> => (takes ? valueFor(f).map((v) => [f, v]) : fc.constant([f]))), { maxLength: 4 }),
  ).map(([t, opts]): string[] => [verb, t, ...opts.flat(),
    // The last occurrence of a flag wins: keep every run short whatever was drawn.
    ...(verb === 'check' ? ['--timeout', '1', '--max-states', '20000'] : ['--max-steps', '20000'])]);
  const other = fc.oneof(
    fc.array(fc.oneof(odd, fc.constantFrom('0x7ffff3fe001ffffa', '7fffd800', 'zz')), { minLength: 1, maxLength: 3 }).map((h): string[] => ['decode', ...h]),
    fc.constantFrom<string[]>(['examples'], [], ['--version'], ['nosuchverb'], ['run'], ['check', '--nope']),
  );
  const arb: fc.Arbitrary<string[]> = fc.oneof({ arbitrary: invocation('run'), weight: 4 }, { arbitrary: invocation('check'), weight: 4 }, { arbitrary: other, weight: 1 });

  const watched = [...Object.values(P), join(S, 'target.json'), '/dev/null', '/dev/full'];
  let runs = 0;
  await fc.assert(fc.asyncProperty(arb, async (args) => {
    runs++;
    const before = new Map(watched.map((p) => [p, kind(p)]));
    const usesFifo = args.includes(P.fifo);
    const closeFifo = usesFifo ? fifoReader(P.fifo) : null;
    const out: string[] = [];
    const err: string[] = [];
    let code: number;
    try {
      code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
    } finally {
      await closeFifo?.();
    }
    const text = `${out.join('\n')}\n${err.join('\n')}`;
    expect(code, 'exit code').toBeGreaterThanOrEqual(0);
    expect(code, 'exit code').toBeLessThanOrEqual(3);
    // A SARIF log's base URI (`"uri": "file:///…"`, e.g. `--sarif -`) is data, not an internal path.
    expect(text.replace(/"uri": "file:\/\/[^"]*"/g, '"uri": "…"')).not.toMatch(INTERNAL);
    expect(text).not.toMatch(RAW);
    // No temporary file anywhere in the scratch directory.
    const tmp = [S, P.dir].flatMap((d) => readdirSync(d).filter((n) => n.includes('.tmp-')));
    expect(tmp).toEqual([]);
    for (const [p, k] of before) {
      const now = kind(p);
      if (k === 'file') expect(now, p).toBe('file');
      else if (k === 'missing') expect(['missing', 'file'], p).toContain(now);
      else expect(now, p).toBe(k);
    }
  }), { numRuns: RUNS });
  expect(runs).toBeGreaterThanOrEqual(RUNS);
}, 120_000);
