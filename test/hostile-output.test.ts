/**
 * Hostile output paths: `--trace` / `--sarif` never clobber a link, FIFO or device, a bad path is
 * exit 2 with one line for `run` and `check` alike, and no temporary file survives an error or a
 * signal (src/cli/output.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync, closeSync, readSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildCli } from './support/measured-cli.js';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';

const REPO = resolve(__dirname, '..');

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const fresh = () => mkdtempSync(join(tmpdir(), 'mbsim-out-'));
const temps = (dir: string) => readdirSync(dir).filter((n) => n.includes('.tmp-'));

/** The two verbs that write a trace, on a small kernel; `check` finds a hang so it has one to write. */
const VERBS: [string, string[]][] = [
  ['run', ['run', 'mechanism', '--trace']],
  ['check', ['check', 'examples/bugs/B01.mbk', '--trace']],
];

describe('output to a symlink, a FIFO, a device', () => {
  test.each(VERBS)('%s --trace LINK: the link stays a link and its target gets the trace', async (_v, args) => {
    const dir = fresh();
    const target = join(dir, 'real.json');
    writeFileSync(target, 'old');
    const link = join(dir, 'link.json');
    symlinkSync(target, link);
    const r = await cli([...args, link]);
    expect(r.err).toBe('');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    const t = JSON.parse(readFileSync(target, 'utf8'));
    expect(t.traceEvents.length).toBeGreaterThan(5);
    expect(temps(dir)).toEqual([]);
  });

  test('a dangling link: its target is created, the link stays', async () => {
    const dir = fresh();
    const link = join(dir, 'link.json');
    symlinkSync(join(dir, 'made.json'), link);
    expect((await cli(['run', 'mechanism', '--trace', link])).code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'made.json'), 'utf8')).traceEvents.length).toBeGreaterThan(5);
  });

  test.each(VERBS)('%s --trace FIFO: the reader gets the whole trace; the FIFO stays a FIFO', async (_v, args) => {
    const dir = fresh();
    const fifo = join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const chunks: Buffer[] = [];
    const read = new Promise<void>((done, fail) => {
      createReadStream(fifo).on('data', (c) => chunks.push(c as Buffer)).on('end', done).on('error', fail);
    });
    const r = await cli([...args, fifo]);
    await read;
    expect(r.err).toBe('');
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8')).traceEvents.length).toBeGreaterThan(5);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(temps(dir)).toEqual([]);
  });

  test('/dev/null is written in place and stays a character device', async () => {
    const r = await cli(['run', 'mechanism', '--trace', '/dev/null']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('trace written to /dev/null');
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    expect((await cli(['check', 'examples/bugs/B01.mbk', '--sarif', '/dev/null', '--trace', '/dev/null'])).code).toBe(1);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  test('--trace - (the standard output, where the report goes): refused, exit 2, nothing written', async () => {
    const r = await cli(['run', 'mechanism', '--json', '--trace', '-']);
    expect(r.code).toBe(2);
    // One document on stdout: the error's (no report, no trace).
    expect(JSON.parse(r.out)).toMatchObject({ schema: 'mbsim.error/1', command: 'run', exitCode: 2 });
    // run has no --quiet: it names the standard error instead (it offered a --quiet that run refused as an unknown option).
    expect(r.err).toBe('mbsim: error: --trace - is the standard output, where the report is written: give --trace a file of its own (or /dev/stderr)');
  });

  test('/dev/stdout and /proc/self/fd/1 are refused like -; /dev/stderr goes through the CLI\'s own output', async () => {
    for (const path of ['/dev/stdout', '/proc/self/fd/1']) {
      const r = await cli(['run', 'mechanism', '--trace', path]);
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toMatch(/is the standard output, where the report is written/);
    }
    const r = await cli(['run', 'mechanism', '--trace', '/dev/stderr']);
    expect(r.code).toBe(0);
    const docs = r.err.split('\n').filter((l) => l.startsWith('{"traceEvents"'));
    expect(docs).toHaveLength(1);
    expect(JSON.parse(docs[0]!).traceEvents.length).toBeGreaterThan(5);
    expect(r.out).toContain('trace written to /dev/stderr');
  });

  test('/dev/full: exit 2 with the reason, the device untouched', async () => {
    const r = await cli(['run', 'mechanism', '--trace', '/dev/full']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mbsim: error: cannot write /dev/full: no space left on the device (ENOSPC)');
    expect(statSync('/dev/full').isCharacterDevice()).toBe(true);
  });
});

describe('paths that cannot be written: exit 2, one line, no temporary file', () => {
  for (const [verb, args] of [...VERBS, ['check --sarif', ['check', 'examples/bugs/B01.mbk', '--sarif']] as [string, string[]]]) {
    test(`${verb} to a directory`, async () => {
      const dir = fresh();
      const sub = join(dir, 'sub');
      mkdirSync(sub);
      const r = await cli([...args, sub]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`mbsim: error: cannot write ${sub}: it is a directory`);
      expect(temps(dir)).toEqual([]);
      expect(temps(sub)).toEqual([]);
      expect(r.out).toBe(''); // refused before the work
    });

    test(`${verb} into a missing directory`, async () => {
      const dir = fresh();
      const r = await cli([...args, join(dir, 'no', 'x.json')]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`mbsim: error: cannot write ${join(dir, 'no', 'x.json')}: no such directory (ENOENT)`);
    });

    // Root writes into a read-only directory anyway.
    test.skipIf(process.getuid?.() === 0)(`${verb} into a read-only directory`, async () => {
      const dir = fresh();
      chmodSync(dir, 0o500);
      const r = await cli([...args, join(dir, 'x.json')]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^mbsim: error: cannot write .*: permission denied \(EACCES\)$/);
    });
  }

  test('a link to a directory is refused like the directory', async () => {
    const dir = fresh();
    mkdirSync(join(dir, 'd'));
    symlinkSync(join(dir, 'd'), join(dir, 'l'));
    const r = await cli(['check', 'examples/bugs/B01.mbk', '--trace', join(dir, 'l')]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`mbsim: error: cannot write ${join(dir, 'l')}: it is a directory`);
    expect(lstatSync(join(dir, 'l')).isSymbolicLink()).toBe(true);
  });
});

describe('a regular file is replaced atomically', () => {
  test.each(VERBS)('%s: a new inode renamed over the old one; a reader of the old file still reads it whole; the mode is kept', async (_v, args) => {
    const dir = fresh();
    const f = join(dir, 't.json');
    writeFileSync(f, 'previous contents');
    chmodSync(f, 0o640);
    const before = statSync(f);
    const fd = openSync(f, 'r');
    const r = await cli([...args, f]);
    expect(r.err).toBe('');
    const after = statSync(f);
    expect(after.ino).not.toBe(before.ino);
    expect(after.mode & 0o777).toBe(0o640);
    expect(JSON.parse(readFileSync(f, 'utf8')).traceEvents.length).toBeGreaterThan(5);
    const old = Buffer.alloc(64);
    expect(old.toString('utf8', 0, readSync(fd, old, 0, 64, 0))).toBe('previous contents');
    closeSync(fd);
    expect(temps(dir)).toEqual([]);
  });
});

describe('signals', () => {
  test.each(['SIGINT', 'SIGTERM'] as const)('%s during a large write leaves no temporary file and no output file', async (signal) => {
    const dir = fresh();
    const target = join(dir, 'big.json');
    // The writer itself, in a child process, writing 200 MB.
    const script = `import { writeOutput } from './src/cli/output.ts';
await writeOutput(${JSON.stringify(target)}, 'x'.repeat(200_000_000), { out: () => {}, err: () => {} });
console.log('finished');`;
    const child = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', '--input-type=module', '-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on('exit', (code, sig) => done({ code, signal: sig })));
    // Wait for the temporary file to exist and grow, then interrupt.
    let sent = false;
    for (let i = 0; i < 6000 && !sent; i++) {
      const t = temps(dir)[0];
      if (t) {
        let size = 0;
        try {
          size = statSync(join(dir, t)).size;
        } catch {
          size = 0;
        }
        if (size > 0) {
          child.kill(signal);
          sent = true;
        }
      }
      if (!sent) await new Promise((r) => setTimeout(r, 5));
    }
    expect(sent).toBe(true);
    const { signal: got } = await exited;
    expect(got).toBe(signal);
    expect(stdout).toBe('');
    expect(temps(dir)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);
});

describe('an output path that is the kernel file itself', () => {
  test('--sarif / --trace naming the sketch (directly, or through a link) is exit 2 and the sketch is untouched', async () => {
    const dir = fresh();
    const sk = join(dir, 'k.mbk');
    const text = readFileSync(join(REPO, 'examples/bugs/B01.mbk'), 'utf8');
    writeFileSync(sk, text);
    symlinkSync(sk, join(dir, 'link'));
    for (const args of [['check', sk, '--sarif', sk], ['check', sk, '--trace', join(dir, 'link')], ['run', sk, '--trace', join(dir, '.', 'k.mbk')]]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(args[0] === 'run' ? /it is the kernel file being run\b/ : /it is the kernel file being checked/);
      expect(readFileSync(sk, 'utf8')).toBe(text);
      expect(temps(dir)).toEqual([]);
    }
  });
});

describe('--timing reads only a regular file of bounded size', () => {
  test('/dev/zero, a FIFO and a 2 MiB file are exit 2 at once', async () => {
    const dir = fresh();
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const big = join(dir, 'big.json');
    writeFileSync(big, `{"x": "${'a'.repeat(2 << 20)}"}`);
    for (const [f, msg] of [['/dev/zero', /not a regular file/], [fifo, /not a regular file/], [big, /a timing file has at most/]] as const) {
      const r = await cli(['run', 'mechanism', '--timing', f]);
      expect(r.code, f).toBe(2);
      expect(r.err).toMatch(msg);
    }
  });
});

describe('standard output that cannot be written', () => {
  test('> /dev/full: one line on stderr and exit 2, no stack trace', () => {
    const fd = openSync('/dev/full', 'w');
    try {
      // The compiled CLI (built for this test run: a clean checkout has no dist/ before npm run build).
      const r = spawnSync(process.execPath, [buildCli(), 'run', 'mechanism'], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr.trim()).toBe('mbsim: error: cannot write the output: no space left on the device (ENOSPC)');
    } finally {
      closeSync(fd);
    }
  });
});
