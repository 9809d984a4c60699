/**
 * The bounds and signals of the CLI's outputs: Ctrl-C during `check --watch` while an output file
 * is written (or about to be) stops cleanly, and the `--json` document of a long run goes out at
 * the pace of its reader, within --max-memory (measured: the peak resident set of the built CLI).
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, lstatSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { outputBudget } from '../src/cli/budget.js';
import { main, type IO } from '../src/cli/main.js';
import { interruptOutputs, resumeOutputs, writeOutput, WriteInterrupted } from '../src/cli/output.js';
import { buildCli, measureCli } from './support/measured-cli.js';

const REPO = resolve(__dirname, '..');
const MiB = 1048576;
const fresh = () => mkdtempSync(join(tmpdir(), 'mbsim-bounds-'));
const temps = (dir: string) => readdirSync(dir).filter((n) => n.includes('.tmp-'));
const sinks = { out: () => undefined, err: () => undefined };

beforeAll(() => {
  buildCli();
}, 180_000);

describe('a signal during an output write, in a process that handles the signal itself', () => {
  afterEach(() => resumeOutputs());

  test('SIGINT mid-write with another listener: the write stops with WriteInterrupted (not EBADF), the old file stays, no temp file', () => {
    const dir = fresh();
    const f = join(dir, 'out.json');
    writeFileSync(f, 'old');
    const r = spawnSync(process.execPath, ['--import', './test/support/ts-register.mjs', 'test/support/interrupted-write.ts', f], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ error: `writing ${f} was interrupted by SIGINT; it is left as it was`, interrupted: true, heard: true });
    expect(readFileSync(f, 'utf8')).toBe('old');
    expect(temps(dir)).toEqual([]);
  }, 60_000);

  test('interruptOutputs: the write in progress stops at its next chunk, later writes are refused until resumeOutputs', async () => {
    const dir = fresh();
    const f = join(dir, 'out.json');
    writeFileSync(f, 'old');
    function* chunks() {
      for (let i = 0; i < 16; i++) {
        if (i === 3) interruptOutputs('SIGINT');
        yield 'y'.repeat(1 << 20);
      }
    }
    await expect(writeOutput(f, chunks(), sinks)).rejects.toThrow(new WriteInterrupted(`writing ${f} was interrupted by SIGINT; it is left as it was`));
    expect(readFileSync(f, 'utf8')).toBe('old');
    expect(temps(dir)).toEqual([]);
    await expect(writeOutput(join(dir, 'later.json'), 'z', sinks)).rejects.toThrow(`${join(dir, 'later.json')} not written: stopped by SIGINT`);
    expect(readdirSync(dir)).toEqual(['out.json']);
    resumeOutputs();
    await writeOutput(join(dir, 'later.json'), 'z', sinks);
    expect(readFileSync(join(dir, 'later.json'), 'utf8')).toBe('z');
  });

  test('check --watch --trace FIFO, Ctrl-C during a recheck that writes the trace: a clean stop, the code of the last complete check', async () => {
    const dir = fresh();
    const file = join(dir, 'k.mbk');
    const fifo = join(dir, 'trace.json');
    writeFileSync(file, readFileSync(join(REPO, 'examples/mechanism.mbk')));
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // Nobody reads the FIFO: the trace of the recheck's hang waits for a reader (up to --timeout).
    const child = spawn(process.execPath, [buildCli(), 'check', file, '--watch', '--trace', fifo, '--timeout', '30', '--format', 'short'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const until = async (re: RegExp) => {
      for (let i = 0; i < 1200 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      expect(out).toMatch(re);
    };
    await until(/-- watching/);
    expect(out).toMatch(/^mbsim check mechanism: OK/m);
    writeFileSync(file, readFileSync(join(REPO, 'examples/bugs/B01.mbk')));
    appendFileSync(file, '\n');
    await until(/checking again/);
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(err).toBe('');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(temps(dir)).toEqual([]);
  }, 90_000);
});

describe('the output budget', () => {
  test('from 80% of the bound it collects garbage before it looks (once per 4% of growth), and stops only on memory still held', () => {
    let rss = 0;
    let collections = 0;
    let freed = 0;
    const budget = outputBudget(1000, Infinity, () => rss, () => {
      collections++;
      rss -= freed;
    });
    const js = budget.stream();
    const looks = (n: number) => [...js.chunks({ xs: Array.from({ length: n * 1024 }, () => 0) })];
    rss = 790;
    looks(1);
    expect(collections).toBe(0);
    rss = 850;
    freed = 10;
    looks(1);
    expect(collections).toBe(1);
    rss = 860; // less than 4% more than at the last collection: none
    looks(1);
    expect(collections).toBe(1);
    rss = 1020; // over the bound, but a collection gives back 30: not stopped
    freed = 30;
    looks(1);
    expect(collections).toBe(2);
    expect(js.cut).toBe(0);
    expect(budget.stoppedBy()).toBeNull();
    rss = 1100; // over the bound after the collection too: stopped
    freed = 0;
    looks(2);
    expect(collections).toBe(3);
    expect(budget.stoppedBy()).toBe('--max-memory');
    expect(js.cut).toBeGreaterThan(0);
  });
});

describe('run --json waits for its reader', () => {
  test('between chunks the document waits for the output to drain: at most one chunk queued', async () => {
    let queued = 0;
    let most = 0;
    let drains = 0;
    const chunks: string[] = [];
    const io: IO = {
      out: (s) => {
        chunks.push(s);
        most = Math.max(most, ++queued);
      },
      err: () => undefined,
      color: false,
      drain: async () => {
        drains++;
        await new Promise((r) => setTimeout(r, 1));
        queued = 0;
      },
    };
    expect(await main(['run', 'pipeline', '--set', 'K=4000', '--json', '--max-memory', '60000'], io)).toBe(0);
    const doc = JSON.parse(chunks.join(''));
    expect(doc.verdict).toBe('ok');
    expect(chunks.length).toBeGreaterThan(2);
    expect(drains).toBe(chunks.length);
    expect(most).toBe(1);
  }, 60_000);

  test('check --json waits the same way', async () => {
    let drains = 0;
    const chunks: string[] = [];
    const code = await main(['check', 'examples/bugs/B01.mbk', '--json'], { out: (s) => chunks.push(s), err: () => undefined, color: false, drain: async () => void drains++ });
    expect(code).toBe(1);
    expect(JSON.parse(chunks.join('')).schema).toBe('mbsim.check/1');
    expect(drains).toBe(chunks.length);
  });

  test('the built CLI, run --json --max-memory 300 of a long run through a pipe: the peak resident set within 5% of the bound, valid JSON', async () => {
    const r = await measureCli(['run', 'pipeline', '--set', 'K=100000000', '--max-steps', '20000000', '--max-memory', '300', '--json'], 240_000);
    expect(r.err).toBe('');
    expect(r.code).toBe(3);
    expect(r.peakRss).toBeLessThan(315 * MiB);
    const doc = JSON.parse(r.out);
    expect(doc.stopped).toMatch(/^stopped by --max-memory/);
    if (doc.outputStopped) expect(doc.outputStopped).toEqual({ by: '--max-memory', omitted: expect.any(Number) });
    else expect(doc.events.length).toBe(doc.eventCount);
  }, 240_000);
});
