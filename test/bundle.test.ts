import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { TINY_SKETCH } from '../src/bench/startup.js';
import { LspClient } from './support/lsp-client.js';
import { serverUrl } from './support/server-url.js';

/**
 * The bundled command as installed (scripts/bundle.mjs: `mbsim.cjs` loading `cli.cjs` through the
 * code cache, the worker threads' ES module chunks): every verb still works although each loads
 * its modules only when it runs, prints what the unbundled CLI prints, and runs the same with and
 * without its code cache. Bundled into a temporary package folder (package.json, examples/ and
 * dist-web/ beside dist/bin/, as in the tarball), so the checkout's dist/ is left alone.
 */
const REPO = join(__dirname, '..');
let pkg = '';
let bin = '';
let cache = '';
let sketch = '';

beforeAll(() => {
  pkg = mkdtempSync(join(tmpdir(), 'mbsim-bundle-'));
  copyFileSync(join(REPO, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(REPO, 'examples'), join(pkg, 'examples'));
  if (existsSync(join(REPO, 'dist-web'))) symlinkSync(join(REPO, 'dist-web'), join(pkg, 'dist-web'));
  execFileSync(process.execPath, [join(REPO, 'scripts', 'bundle.mjs'), join(pkg, 'dist', 'bin')], { cwd: REPO, stdio: 'pipe' });
  bin = join(pkg, 'dist', 'bin', 'mbsim.cjs');
  cache = join(pkg, 'cache');
  sketch = join(pkg, 'tiny.mbk');
  writeFileSync(sketch, TINY_SKETCH);
}, 120_000);

afterAll(() => {
  if (pkg) rmSync(pkg, { recursive: true, force: true });
});

function bundled(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: REPO, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1', MBSIM_CACHE_DIR: cache, ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function unbundled(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s.endsWith('\n') ? s : `${s}\n`), err: (s) => err.push(s.startsWith('\r') || s.endsWith('\n') ? s : `${s}\n`), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

/** Run times and memory figures vary from run to run. */
const steady = (s: string) =>
  s.replace(/\d+(\.\d+)? s\b/g, 'T s').replace(/~?\d+(\.\d+)? MB/g, 'M MB').replace(/"(memoryBytes|elapsedMs|peakRss|wallMs)":\d+(\.\d+)?/g, '"$1":N');

describe('the bundled mbsim', () => {
  test('check on a sketch: the report, exit 0, and the code cache written by the first run and used by the next', () => {
    rmSync(cache, { recursive: true, force: true });
    const first = bundled(['check', sketch]);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/verdict: OK/);
    expect(readdirSync(cache).filter((f) => f.endsWith('-check.v8cache'))).toHaveLength(1);
    const second = bundled(['check', sketch]);
    expect({ ...second, out: steady(second.out) }).toEqual({ ...first, out: steady(first.out) });
    // Off (NODE_DISABLE_COMPILE_CACHE), and with a cache V8 rejects: the same.
    const off = bundled(['check', sketch], { NODE_DISABLE_COMPILE_CACHE: '1' });
    expect({ ...off, out: steady(off.out) }).toEqual({ ...first, out: steady(first.out) });
    for (const f of readdirSync(cache)) writeFileSync(join(cache, f), 'not a code cache');
    const bad = bundled(['check', sketch]);
    expect({ ...bad, out: steady(bad.out) }).toEqual({ ...first, out: steady(first.out) });
    // A cache folder that cannot be made: the run is the same and says nothing about it.
    writeFileSync(join(pkg, 'a-file'), '');
    const nowhere = bundled(['check', sketch], { MBSIM_CACHE_DIR: join(pkg, 'a-file', 'cache') });
    expect({ ...nowhere, out: steady(nowhere.out) }).toEqual({ ...first, out: steady(first.out) });
  }, 120_000);

  test('prints what the unbundled CLI prints, with its exit codes (check, run, decode, examples, info, PTX input, usage errors)', async () => {
    const cases = [
      ['check', 'B01'],
      ['check', 'pipeline', '--set', 'K=2', '--format', 'short'],
      ['check', sketch, '--json'],
      ['run', 'pipeline', '--set', 'K=2'],
      ['run', 'examples/bugs/B01.mbk', '--json', '--omit', 'events,spans'],
      ['decode', '0x7ffff3fe001ffffa', '7fffd800'],
      ['decode', 'zz'],
      ['examples'],
      ['info', 'test/fixtures/ptx/tma_pipeline.ptx'],
      ['check', 'test/fixtures/ptx/tma_pipeline.ptx'],
      ['run', 'test/fixtures/ptx/tma_pipeline.ptx'],
      ['check', 'no-such-file.mbk'],
      ['check', sketch, '--kernel', 'x'],
      ['run', 'pipeline', '--timing', 'no-such-timing.json'],
      ['check', 'pipeline', '--sweep', 'K=1..2'],
      ['frobnicate'],
      ['--version'],
      ['check', '--help'],
      [],
    ];
    for (const args of cases) {
      const b = bundled(args);
      const u = await unbundled(args);
      expect({ args, code: b.code, out: steady(b.out), err: steady(b.err) }).toEqual({ args, code: u.code, out: steady(u.out), err: steady(u.err) });
    }
  }, 300_000);

  test('check --workers 2 runs the worker threads from the bundle', () => {
    const r = bundled(['check', 'pipeline', '--set', 'K=3', '--workers', '2', '--json']);
    expect(r.err).toBe('');
    expect(JSON.parse(r.out).verdict).toBe('ok');
  }, 60_000);

  test('serve --help, and serve starts and answers', async () => {
    const help = bundled(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: mbsim serve/);
    if (!existsSync(join(REPO, 'dist-web', 'index.html'))) return; // the explorer is not built here
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [bin, 'serve', '--port', '0'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MBSIM_CACHE_DIR: cache } });
    try {
      const url = await serverUrl(child);
      expect((await fetch(url)).status).toBe(200);
    } finally {
      // Waited for: at its exit the command writes its code cache into the folder afterAll removes.
      const gone = child.exitCode === null && child.signalCode === null ? new Promise((done) => child.once('exit', done)) : Promise.resolve();
      child.kill('SIGTERM');
      await gone;
    }
  }, 60_000);

  test('lsp starts, answers initialize, publishes the hazards of its check thread and exits 0', async () => {
    const lsp = new LspClient(process.execPath, [bin, 'lsp', '--stdio'], REPO);
    try {
      const init = await lsp.request('initialize', { processId: process.pid, capabilities: {} });
      expect(init).toHaveProperty('capabilities');
      lsp.notify('initialized', {});
      const uri = 'file:///tmp/b01.mbk';
      const { readFileSync } = await import('node:fs');
      lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'mbk', version: 1, text: readFileSync(join(REPO, 'examples', 'bugs', 'B01.mbk'), 'utf8') } });
      await lsp.waitFor((x) => x.method === 'textDocument/publishDiagnostics' && (x.params as { diagnostics: { code: string }[] }).diagnostics.some((d) => d.code === 'hang'), 'the hang of B01');
      await lsp.request('shutdown', null);
      lsp.notify('exit', null);
      expect(await lsp.exited).toBe(0);
    } finally {
      lsp.child.kill();
    }
  }, 60_000);
});
