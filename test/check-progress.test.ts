import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { parseSketch } from '../src/lang/index.js';
import { EXAMPLES } from '../src/examples/index.js';
import { instantiate, type Program } from '../src/machine/program.js';
import {
  boundFraction, check, formatProgress, runCheckCli, runCheckSweepCli, searchBounds, type CheckCliOptions, type ProgressStream, type Progress,
} from '../src/check/index.js';
import { main } from '../src/cli/main.js';

/** The clear `cli-progress` writes when the bar stops (clearOnComplete): column 1, erase the line. */
const CLEAR = '\x1b[1G\x1b[2K';
/** What starts each redraw of the bar: cursor to column 1. */
const REDRAW = '\x1b[1G';

/** A fake stderr: records what is written; `isTTY` says whether it claims to be a terminal. */
function fakeStream(isTTY: boolean, columns = 160): ProgressStream & { text(): string; writes: number } {
  const chunks: string[] = [];
  return {
    isTTY,
    columns,
    writes: 0,
    write(s: string) {
      chunks.push(s);
      this.writes++;
      return true;
    },
    text: () => chunks.join(''),
  };
}

/** The drawn lines of the bar, in order (each redraw starts at column 1 and clears to the right). */
function frames(out: string): string[] {
  return out.split(REDRAW).map((f) => f.replace(/\x1b\[0K(\x1b8)?$/, '')).filter((f) => f.length && !f.startsWith('\x1b'));
}

const statesIn = (frame: string) => Number(/([\d,]+) states /.exec(frame)![1]!.replaceAll(',', ''));

/** FlashAttention-3's forward sketch: a search of a few hundred states over some thirty levels (the built-in examples take a handful since arrivals on counting barriers are taken alone). */
function fa3(): Program {
  const file = 'examples/fa3-forward.mbk';
  return instantiate(parseSketch(readFileSync(file, 'utf8'), file).kernel!);
}

/** Runs runCheckCli and returns the exit code and everything written to out and err. */
async function cli(prog: Program, opts: CheckCliOptions, progress?: ProgressStream) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCheckCli(prog, opts, { out: (s) => out.push(s), err: (s) => err.push(s), color: false, ...(progress ? { progress } : {}) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The report without its run-time figures (elapsed seconds), which differ between two runs. */
// Elapsed time and the process's memory differ between two runs of the same search.
const stable = (s: string) => s.replace(/\d+\.\d\d s/g, 'T s').replace(/~[\d.,]+ [KM]B/g, '~M MB');

const P: Progress = { states: 199_187, transitions: 1_000_000, depth: 40, frontier: 856, memory: 30 * 1048576, elapsedMs: 3900 };
const B = { maxStates: 200_000, timeoutMs: 60_000, maxMemory: 2 * 1024 ** 3 };

describe('progress line', () => {
  test('the nearest bound drives the bar', () => {
    expect(boundFraction(P, B)).toEqual({ fraction: 199_187 / 200_000, bound: '--max-states' });
    expect(boundFraction({ ...P, elapsedMs: 45_000 }, { ...B, maxStates: 5_000_000 })).toEqual({ fraction: 0.75, bound: '--timeout' });
    expect(boundFraction({ ...P, memory: 1024 ** 3 }, { ...B, maxStates: 5_000_000 })).toEqual({ fraction: 0.5, bound: '--max-memory' });
    expect(boundFraction({ ...P, states: 400_000 }, B).fraction).toBe(1);
    expect(searchBounds({})).toEqual({ maxStates: 5_000_000, timeoutMs: 60_000, maxMemory: 2 * 1024 ** 3 });
    expect(searchBounds({ maxStates: 7, timeoutMs: 1000, maxMemoryMb: 3 })).toEqual({ maxStates: 7, timeoutMs: 1000, maxMemory: 3 * 1048576 });
  });

  test('a wide terminal gets every figure and a 30-cell bar', () => {
    // 199,187 / 200,000 = 99.6 %: 30 of 30 cells rounded, 99 % floored.
    expect(formatProgress(P, B, 160)).toBe(`[${'█'.repeat(30)}]  99% of --max-states  199,187 states  51,074 states/s  frontier 856  30.0 MiB  3.9 s`);
    expect(formatProgress({ ...P, states: 50_000 }, B, 160)).toBe(`[${'█'.repeat(8)}${'░'.repeat(22)}]  25% of --max-states  50,000 states  12,821 states/s  frontier 856  30.0 MiB  3.9 s`);
    expect(formatProgress({ ...P, elapsedMs: 75_000 }, { ...B, maxStates: 5e6, timeoutMs: 100_000 }, 160)).toContain('75% of --timeout  199,187 states  2,656 states/s  frontier 856  30.0 MiB  1:15');
    expect(formatProgress(P, B, 160, 'S=2 (1/3)')).toMatch(/^S=2 \(1\/3\) {2}\[█+\]/);
  });

  test('a narrow terminal loses whole figures before the bar, never the bound the bar measures', () => {
    const l80 = formatProgress(P, B, 80);
    expect(l80.length).toBeLessThanOrEqual(79);
    expect(l80).toMatch(/^\[[█░]{10,30}\] {2}99% of --max-states {2}199,187 states {2}51,074 states\/s {2}3\.9 s$/);
    const t = formatProgress({ ...P, elapsedMs: 45_000 }, { ...B, maxStates: 5e6 }, 70);
    expect(t.length).toBeLessThanOrEqual(69);
    expect(t).toContain('45.0 s');
    expect(t).not.toContain('frontier');
    expect(t).toMatch(/^\[[█░]{10,}\]/);
    // Too narrow for any bar: the text, cut to the width.
    expect(formatProgress(P, B, 30)).toBe(' 99% of --max-states  199,187');
  });

  test('the bar keeps its width as the figures grow', () => {
    const gauge = (line: string) => /^\[([█░]+)\]/.exec(line)![1]!;
    for (const w of [80, 100, 120]) {
      const lines = [0, 1_234, 199_187].map((n) => formatProgress({ ...P, states: n, frontier: n, elapsedMs: 1 + n / 10 }, B, w));
      const cells = lines.map((l) => gauge(l).length);
      expect(new Set(cells).size, `width ${w}: ${cells}`).toBe(1);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(w - 1);
    }
    expect(gauge(formatProgress(P, B, 80)).length).toBe(10);
    expect(gauge(formatProgress(P, B, 100)).length).toBe(16);
    expect(gauge(formatProgress(P, B, 120)).length).toBe(30);
  });
});

describe('runCheckCli progress bar', () => {
  const prog = fa3();

  test('none when stderr is not a terminal', async () => {
    const s = fakeStream(false);
    const r = await cli(prog, {}, s);
    expect(r.code).toBe(0);
    expect(s.writes).toBe(0);
    expect(r.err).toBe('');
  });

  test('none with --json, even on a terminal', async () => {
    const s = fakeStream(true);
    const r = await cli(prog, { json: true }, s);
    expect(JSON.parse(r.out).verdict).toBe('ok');
    expect(s.writes).toBe(0);
  });

  test('on a terminal: the states figure, then the clear; the report is unchanged', async () => {
    const states = check(prog).coverage.states;
    expect(states).toBeGreaterThan(100);
    const s = fakeStream(true);
    const tty = await cli(prog, {}, s);
    const plain = await cli(prog, {});
    expect(tty.code).toBe(0);
    const text = s.text();
    // The bar ends with its clear, after the last drawing, which shows the final figures.
    expect(text.endsWith(CLEAR)).toBe(true);
    const fs = frames(text.slice(0, -CLEAR.length));
    expect(fs.length).toBeGreaterThanOrEqual(2);
    expect(fs[0]).toMatch(/^\[░+\] {3}0% of --max-states {2}0 states/);
    expect(statesIn(fs.at(-1)!)).toBe(states);
    expect(fs.at(-1)).toContain(`${states.toLocaleString('en-US')} states`);
    expect(text.lastIndexOf(`${states.toLocaleString('en-US')} states`)).toBeLessThan(text.lastIndexOf(CLEAR));
    // Nothing of the bar reaches stdout or io.err; stdout is the plain report.
    expect(tty.err).toBe('');
    expect(tty.out).not.toMatch(/\x1b|█/);
    expect(stable(tty.out)).toBe(stable(plain.out));
    expect(tty.out).toContain(`${states.toLocaleString('en-US')} states,`);
  });

  describe('live updates from the explorer', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    test('each onProgress redraws the bar with growing figures', async () => {
      // Every clock reading advances 100 ms, so the explorer reports progress every few levels.
      let t = 1_000_000;
      vi.spyOn(Date, 'now').mockImplementation(() => (t += 100));
      const big = fa3();
      const s = fakeStream(true);
      // (--max-memory far away, so that --max-states is the nearest bound.)
      const r = await cli(big, { timeoutMs: 1e12, maxStates: 100_000, maxMemoryMb: 1e9 }, s);
      vi.restoreAllMocks();
      expect(r.code).toBe(0);
      const final = Number(/([\d,]+) states,/.exec(r.out)![1]!.replaceAll(',', ''));
      const fs = frames(s.text());
      const counts = fs.map(statesIn);
      // The start (0), several intermediate figures from onProgress, and the final count.
      expect(counts[0]).toBe(0);
      expect(counts.at(-1)).toBe(final);
      const between = counts.filter((c) => c > 0 && c < final);
      expect(between.length).toBeGreaterThanOrEqual(3);
      for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]!);
      // The bar measures --max-states (100,000): the percentage follows the states.
      const mid = fs.find((f) => statesIn(f) === between.at(-1))!;
      expect(mid).toContain(`${String(Math.floor((between.at(-1)! / 100_000) * 100)).padStart(3)}% of --max-states`);
      expect(s.text().endsWith(CLEAR)).toBe(true);
    });
  });
});

describe('sweep progress bar', () => {
  const ex = EXAMPLES.find((e) => e.name === 'hopper')!;
  const build = (params: Record<string, number>) => instantiate(ex.build(), { S: 2, ...params });
  const ranges = [{ name: 'K', from: 2, to: 4 }];
  const sweep = async (opts: CheckCliOptions, progress?: ProgressStream) => {
    const out: string[] = [];
    const code = await runCheckSweepCli('hopper', ranges, build, opts, { out: (x) => out.push(x), err: () => {}, color: false, ...(progress ? { progress } : {}) });
    return { code, out: out.join('\n') };
  };

  test('none when piped or with --json', async () => {
    const piped = fakeStream(false);
    expect((await sweep({}, piped)).code).toBe(0);
    expect(piped.writes).toBe(0);
    const json = fakeStream(true);
    expect(JSON.parse((await sweep({ json: true }, json)).out).rows).toHaveLength(3);
    expect(json.writes).toBe(0);
  });

  test('on a terminal: one labelled bar per combination, cleared before the table', async () => {
    const s = fakeStream(true);
    const tty = await sweep({}, s);
    const plain = await sweep({});
    const text = s.text();
    expect(text.endsWith(CLEAR)).toBe(true);
    expect(text.split(CLEAR)).toHaveLength(2); // cleared once, at the end
    const fs = frames(text);
    for (const [i, k] of [2, 3, 4].entries()) {
      const states = check(build({ K: k })).coverage.states;
      const last = fs.filter((f) => f.startsWith(`K=${k} (${i + 1}/3)  [`)).at(-1);
      expect(last, `K=${k}`).toBeDefined();
      expect(statesIn(last!)).toBe(states);
    }
    expect(stable(tty.out)).toBe(stable(plain.out));
    expect(tty.out).not.toMatch(/\x1b|█/);
  });
});

describe('mbsim check wiring', () => {
  const run = async (args: string[], progress: ProgressStream) => {
    const lines: string[] = [];
    const code = await main(args, { out: (s) => lines.push(s), err: (s) => lines.push(s), color: false, progress });
    return { code, text: lines.join('\n') };
  };

  test('the CLI draws on the progress stream only when it is a terminal and not --json', async () => {
    const tty = fakeStream(true);
    const a = await run(['check', 'examples/bugs/B12.mbk'], tty);
    expect(a.code).toBe(1);
    expect(a.text).toContain('verdict: RACE');
    expect(frames(tty.text()).at(-1)).toMatch(/ 33 states /);
    expect(tty.text().endsWith(CLEAR)).toBe(true);

    const json = fakeStream(true);
    expect((await run(['check', '--json', 'examples/bugs/B12.mbk'], json)).code).toBe(1);
    expect(json.writes).toBe(0);

    const piped = fakeStream(false);
    expect((await run(['check', 'examples/bugs/B12.mbk'], piped)).code).toBe(1);
    expect(piped.writes).toBe(0);

    const sweepPiped = fakeStream(false);
    expect((await run(['check', '--sweep', 'BYTES=8192..8193', 'examples/bugs/B12.mbk'], sweepPiped)).code).toBe(1);
    expect(sweepPiped.writes).toBe(0);

    const sweepTty = fakeStream(true);
    const sw = await run(['check', '--sweep', 'BYTES=8192..8193', 'examples/bugs/B12.mbk'], sweepTty);
    expect(sw.text).toMatch(/^BYTES +verdict/m);
    expect(frames(sweepTty.text()).some((f) => f.startsWith('BYTES=8193 (2/2)  ['))).toBe(true);
    expect(sweepTty.text().endsWith(CLEAR)).toBe(true);
  });
});
