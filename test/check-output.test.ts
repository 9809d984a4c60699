import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/check.js';
import { artifactLocation, checkSarif, repositoryWebUrl, ruleHelp } from '../src/check/sarif.js';
import { HAZARD_FIX, HAZARD_TEXT } from '../src/check/kinds.js';
import { main } from '../src/cli/main.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

async function cli(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('mbsim check output for tools', () => {
  test('--format short: one compiler-style line per finding, errors then warnings, and a summary line', async () => {
    const r = await cli('check', 'examples/bugs/B10.mbk', '--all', '--format', 'short');
    expect(r.code).toBe(1);
    const lines = r.out.trimEnd().split('\n');
    // The hang's line carries its static root cause.
    expect(lines[0]).toBe('examples/bugs/B10.mbk:20:9: error[hang]: barrier b[1]: no agent or asynchronous unit can make progress: r.w0–w3 (4 agents) in mbarrier.try_wait.parity b[s], s & 1'
      + '; cause (trip-mismatch at lines 18 and 20): r.w0 waits on b[1] 1 time(s) (the first on the fresh barrier), observing 0 phase(s), but the arrivals on it (1, count 1) complete 1 phase(s): the roles disagree about the number of trips');
    expect(lines[1]).toMatch(/^examples\/bugs\/B10\.mbk:21:9: error\[race\]: buffer X\[1\]: r\.w0 reads X\[1\] while the TMA copy/);
    expect(lines.slice(0, -1).every((l) => /^examples\/bugs\/B10\.mbk:\d+:\d+: (error|warning)\[[a-z-]+\]: /.test(l))).toBe(true);
    expect(lines.filter((l) => l.includes(': warning[')).length).toBe(4);
    // One finding per (kind, subject): the two hangs on b[1] (other agents blocked) are one.
    expect(lines.filter((l) => l.includes('error[hang]: barrier b[1]:')).length).toBe(1);
    expect(lines.at(-1)).toBe('mbsim check per_iter_barriers: HANG, 6 errors, 4 warnings; 367 states, every schedule explored');
  });

  test('--format short: a race names the wait_group whose depth is the fix, and its other lines', async () => {
    const r = await cli('check', 'examples/bugs/B15.mbk', '--all', '--format', 'short');
    const race = r.out.split('\n').find((l) => l.includes('error[race]: buffer A[0]'))!;
    expect(race).toMatch(/^examples\/bugs\/B15\.mbk:19:9: error\[race\]: buffer A\[0\]: TMA copy issued by producer writes A\[0\] while the wgmma issued by consumer\.w0 \(line 26\) is still reading it; fix at line 28: wait_group depth: consumer\.w0's wgmma\.wait_group 1 \(line 28\) leaves 1 group\(s\) in flight/);
    expect(race.endsWith('; see lines 26, 28 and 29')).toBe(true);
    // Four hangs with other agents blocked, one finding.
    expect(r.out.split('\n').filter((l) => l.includes('error[hang]')).length).toBe(1);
  });

  test('text: merged sites are named, and a cycle refers to its hang\'s trace instead of printing it again', async () => {
    const b13 = (await cli('check', 'examples/bugs/B13.mbk', '--all')).out;
    expect(b13.match(/^\d+\. HANG on barrier full\[0\]$/gm)).toHaveLength(1);
    expect(b13).toContain('   also reached by 2 other schedules at the same lines (one finding per kind and subject: the shortest trace is shown)');
    const t02 = (await cli('check', 'examples/bugs/T02.mbk', '--all')).out;
    expect(t02).toContain('2. CYCLE on barrier tmem');
    expect(t02).toContain('   shortest trace (2 steps): the trace of 1 above (the same schedule)');
    expect(t02.match(/shortest trace \(/g)).toHaveLength(2);
    // Its steps are printed once (step 1 of the hang's trace).
    expect(t02.split('\n').filter((l) => /^   1 {3}/.test(l))).toHaveLength(1);
  });

  test('--max-traces (default 3) prints the first traces and says how many were left out; --max-traces 0 prints none', async () => {
    const all = await cli('check', 'examples/bugs/B10.mbk', '--all', '--max-traces', '100');
    const def = await cli('check', 'examples/bugs/B10.mbk', '--all');
    const none = await cli('check', 'examples/bugs/B10.mbk', '--all', '--max-traces', '0');
    const traces = (s: string) => (s.match(/shortest trace \(/g) ?? []).length;
    expect(traces(all.out)).toBe(8);
    expect(traces(def.out)).toBe(3);
    expect(def.out).toMatch(/\(5 traces left out after the first 3: --max-traces N prints more, --json prints all\)/);
    expect(traces(none.out)).toBe(0);
    expect(none.out).toContain('(8 traces left out: --max-traces 0 prints none; --max-traces N prints N, --json prints all)');
    expect(none.out).not.toContain('after the first 0');
    const one = await cli('check', 'examples/bugs/B10.mbk', '--all', '--max-traces', '1');
    expect(traces(one.out)).toBe(1);
    expect(one.out).toContain('(7 traces left out after the first one: --max-traces N prints more, --json prints all)');
    expect(def.out.split('\n').length).toBeLessThan(all.out.split('\n').length);
    expect((await cli('check', 'pipeline', '--max-traces', 'x')).err).toBe("mbsim: error: --max-traces expects a non-negative integer, got 'x'");
  });

  test('--quiet prints nothing; the exit code carries the verdict', async () => {
    expect(await cli('check', 'examples/bugs/B01.mbk', '--quiet')).toEqual({ code: 1, out: '', err: '' });
    expect(await cli('check', 'pipeline', '--quiet')).toEqual({ code: 0, out: '', err: '' });
    const both = await cli('check', 'pipeline', '--quiet', '--json');
    expect(both.code).toBe(2);
    expect(both.err).toBe('mbsim: error: --quiet prints nothing; it cannot be combined with --json or --format');
  });

  test('--format json is --json; an unknown format is bad input', async () => {
    const j = await cli('check', 'examples/bugs/B01.mbk', '--format', 'json');
    expect(JSON.parse(j.out).verdict).toBe('hang');
    const bad = await cli('check', 'pipeline', '--format', 'xml');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--format <FORMAT>' argument 'xml' is invalid\. Allowed choices are text, short, json/);
  });

  test('--strict says what it does in the help', async () => {
    const h = await cli('check', '--help');
    expect(h.out.replace(/\s+/g, ' ')).toMatch(/--strict PTX's proxy rule in full: cross-proxy write-after-read \(generic reads of a buffer, then a TMA overwrite ordered only by an mbarrier hand-off, no fence\.proxy\.async\) becomes a race error/);
  });
});

describe('SARIF', () => {
  const source = readFileSync('examples/bugs/B01.mbk', 'utf8');
  const result = () => check(instantiate(parseSketch(source, join(process.cwd(), 'examples/bugs/B01.mbk')).kernel!));
  type Log = { runs: { tool: { driver: { informationUri?: string; version?: string; rules: { id: string; helpUri?: string; help: { text: string } }[] } }; originalUriBaseIds: Record<string, { uri: string }>; results: { locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string } } }[] }[] }[] };

  test('locations are relative to %SRCROOT%, which originalUriBaseIds maps to the source root', () => {
    const s = checkSarif(result(), { toolVersion: '1.2.3', srcRoot: process.cwd() }) as Log;
    const run = s.runs[0]!;
    expect(run.results[0]!.locations[0]!.physicalLocation.artifactLocation).toEqual({ uri: 'examples/bugs/B01.mbk', uriBaseId: '%SRCROOT%' });
    expect(run.originalUriBaseIds['%SRCROOT%']!.uri).toBe(pathToFileURL(process.cwd()).href + '/');
    expect(run.tool.driver.version).toBe('1.2.3');
    expect(artifactLocation('/elsewhere/k.mbk', '/work/repo')).toEqual({ uri: 'file:///elsewhere/k.mbk' });
    expect(artifactLocation('./a b.mbk', '/r')).toEqual({ uri: 'a%20b.mbk', uriBaseId: '%SRCROOT%' });
  });

  test('without a repository address there is no informationUri nor helpUri; with one, both point at it', () => {
    const bare = (checkSarif(result()) as Log).runs[0]!.tool.driver;
    expect(bare.informationUri).toBeUndefined();
    expect(bare.rules[0]!.helpUri).toBeUndefined();
    expect(bare.rules[0]!.help.text).toBe(`${HAZARD_TEXT.hang}\n\nFix: ${HAZARD_FIX.hang}`);
    const withRepo = (checkSarif(result(), { repositoryUrl: 'https://github.com/o/mbsim' }) as Log).runs[0]!.tool.driver;
    expect(withRepo.informationUri).toBe('https://github.com/o/mbsim');
    expect(withRepo.rules[0]!.helpUri).toBe('https://github.com/o/mbsim/blob/main/docs/CHECK.md#hazards');
    expect(withRepo.rules[0]!.help.text).toBe(`${HAZARD_TEXT.hang}\n\nFix: ${HAZARD_FIX.hang}\n\nMore: https://github.com/o/mbsim/blob/main/docs/CHECK.md#hazards (row hang)`);
    const withHome = (checkSarif(result(), { homepageUrl: 'https://mbsim.example.org', repositoryUrl: 'https://github.com/o/mbsim' }) as Log).runs[0]!.tool.driver;
    expect(withHome.informationUri).toBe('https://mbsim.example.org');
    expect(withHome.rules[0]!.helpUri).toBe('https://github.com/o/mbsim/blob/main/docs/CHECK.md#hazards');
    expect(repositoryWebUrl({ type: 'git', url: 'git+https://github.com/o/mbsim.git' })).toBe('https://github.com/o/mbsim');
    expect(repositoryWebUrl('github:o/mbsim')).toBe('https://github.com/o/mbsim');
    expect(repositoryWebUrl('git@github.com:o/mbsim.git')).toBe('https://github.com/o/mbsim');
    expect(repositoryWebUrl(undefined)).toBeUndefined();
  });

  test('the rules are whole without a link: fullDescription and help (text, markdown) say what the hazard means and how to fix it', async () => {
    type Rule = { id: string; helpUri?: string; fullDescription: { text: string }; help: { text: string; markdown: string } };
    // The CLI's log (package.json names no repository nor home page): no URI anywhere in a rule.
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-sarif-'));
    const file = join(dir, 'b01.sarif');
    await main(['check', 'examples/bugs/B01.mbk', '--sarif', file], { out: () => {}, err: () => {}, color: false });
    const r = JSON.parse(readFileSync(file, 'utf8')) as { runs: { tool: { driver: { informationUri?: string; rules: Rule[] } } }[] };
    rmSync(dir, { recursive: true, force: true });
    const driver = r.runs[0]!.tool.driver;
    expect(driver.informationUri).toBeUndefined();
    expect(driver.rules.map((x) => x.id)).toEqual(['hang', 'count-mismatch']);
    const [hang, count] = driver.rules as [Rule, Rule];
    expect(hang.helpUri).toBeUndefined();
    expect(hang.fullDescription.text).toBe(`${HAZARD_TEXT.hang} Fix: ${HAZARD_FIX.hang}`);
    expect(count.help.text).toBe("A barrier's arrivals do not add up to whole phases of its expected count.\n\nFix: Make the expected count equal to the arrivals each phase receives (the threads or warps that arrive, times the count of each arrive); a named barrier's thread count equal to the threads that use its id.");
    expect(count.help.markdown).toBe("**`count-mismatch`**: A barrier's arrivals do not add up to whole phases of its expected count.\n\n**Fix:** Make the expected count equal to the arrivals each phase receives (the threads or warps that arrive, times the count of each arrive); a named barrier's thread count equal to the threads that use its id.");
    expect(ruleHelp('race').fix).toContain('\'released by\' and \'fix\' lines');
    for (const rule of driver.rules) expect(`${rule.help.text}${rule.help.markdown}${rule.fullDescription.text}`).not.toMatch(/https?:|docs\//);
  }, 60_000);

  test('every kind has its fix; a model code\'s rule says what the H200 does', () => {
    expect(Object.keys(HAZARD_TEXT).filter((k) => !HAZARD_FIX[k])).toEqual([]);
    const over = ruleHelp('over-arrival');
    expect(over.meaning).toBe("A barrier or memory operation the PTX ISA leaves undefined, or a rule the machine enforces (model diagnostic over-arrival); the finding's message says which operation and the barrier's state before it. On the H200: the kernel traps (unspecified launch failure); the phase is never silently advanced (docs/HARDWARE.md, Conformance vectors).");
    expect(over.fix).toMatch(/^Change the operation the finding points at/);
  });

  test('every kind with a sentence has a row in docs/CHECK.md\'s hazard table (the rules\' help points there)', () => {
    const doc = readFileSync('docs/CHECK.md', 'utf8');
    const rows = new Set([...doc.matchAll(/^\| `([a-z-]+)`/gm)].map((m) => m[1]!));
    expect(Object.keys(HAZARD_TEXT).filter((k) => !rows.has(k))).toEqual([]);
  });
});

describe('mbsim check --watch', () => {
  test('checks again when the file is saved, until killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-watch-'));
    const file = join(dir, 'k.mbk');
    const ok = readFileSync('examples/pipeline.mbk', 'utf8');
    writeFileSync(file, ok);
    // The CLI from its TypeScript sources (the hooks transpile them), as a separate process.
    const hooks = pathToFileURL(join(__dirname, 'support', 'ts-hooks.mjs')).href;
    const child = spawn(process.execPath, ['--import', `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(hooks)})`, join(__dirname, '..', 'src', 'cli', 'bin.ts'), 'check', file, '--watch', '--set', 'K=2'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const until = (re: RegExp, ms: number) => new Promise<void>((resolve, reject) => {
      const t0 = Date.now();
      const poll = setInterval(() => {
        if (re.test(out)) {
          clearInterval(poll);
          resolve();
        } else if (Date.now() - t0 > ms || child.exitCode !== null) {
          clearInterval(poll);
          reject(new Error(`timed out waiting for ${re}: ${out}`));
        }
      }, 50);
    });
    try {
      await until(/-- watching .*k\.mbk/, 60_000);
      expect(out.match(/verdict: OK/g)?.length).toBe(1);
      // Save a broken version (a typo: bad input is reported and the watch goes on), then the fixed one again: two more reports.
      writeFileSync(file, ok.replace(/^kernel /m, 'kernal '));
      await until(/changed at .*: checking again[\s\S]*error\[E-missing-kernel\][\s\S]*-- watching/, 30_000);
      writeFileSync(file, ok);
      await until(/verdict: OK[\s\S]*verdict: OK/, 30_000);
      expect(out.match(/checking again/g)?.length).toBe(2);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
