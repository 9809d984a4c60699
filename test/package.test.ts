import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LspClient } from './support/lsp-client.js';
import { serverUrl } from './support/server-url.js';

/**
 * The package as a user gets it: `npm pack` (which builds it), the tarball installed into an empty
 * project, the library imported from an ES module and type-checked from TypeScript, every
 * TypeScript block of README.md and docs/API.md compiled and run against it, and the `mbsim`
 * command run through npx.
 */
const repo = join(__dirname, '..');
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
let tmp = '';
let project = '';
let files: string[] = [];
let installErr = '';

function run(cmd: string, args: string[], cwd: string, timeout = 120_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The ```ts blocks of a Markdown file. */
function tsBlocks(file: string): string[] {
  const text = readFileSync(join(repo, file), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'mbsim-pack-'));
  // The installed command's code cache (src/cli/code-cache.ts) goes here, not into the user's cache folder.
  process.env.MBSIM_CACHE_DIR = join(tmp, 'code-cache');
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', tmp, '--silent'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 }).replace(/^[^[]*/, '')) as { filename: string; files: { path: string }[] }[];
  files = packed[0]!.files.map((f) => f.path);
  project = join(tmp, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'uses-mbsim', private: true, type: 'module' }));
  const inst = run('npm', ['install', join(tmp, packed[0]!.filename), '--no-audit', '--no-fund', '--prefer-offline'], project, 240_000);
  if (inst.code !== 0) throw new Error(`npm install of the tarball failed:\n${inst.err}`);
  installErr = inst.err;
}, 600_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the packed package', () => {
  test('ships the library, the bundled CLI, the explorer, the examples and the docs; nothing of test/ or hw/', () => {
    expect(files.filter((f) => /^(test|hw|conformance|src|scripts)\//.test(f))).toEqual([]);
    for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/bin/mbsim.cjs', 'dist/bin/cli.cjs', 'dist/bin/lsp.cjs', 'dist/bin/serve.cjs', 'dist/bin/check-worker.js', 'dist/bin/lsp-worker.js', 'dist-web/index.html', 'examples/pipeline.mbk', 'examples/bugs/B01.mbk', 'docs/API.md', 'docs/CHECK.md']) {
      expect(files, f).toContain(f);
    }
    expect(files.some((f) => f.endsWith('.map'))).toBe(false);
    // The command is the bundle; the unbundled CLI, the explorer's page code and the bench stay home.
    expect(files.filter((f) => /^dist\/(cli|web|bench|lsp)\//.test(f))).toEqual([]);
    // package.json says MIT: the license text ships with it.
    const license = readFileSync(join(repo, 'LICENSE'), 'utf8');
    expect(license.split('\n').slice(0, 3)).toEqual(['MIT License', '', 'Copyright (c) 2026 the mbsim authors']);
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
    expect((JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { license: string }).license).toBe('MIT');
  });

  test('installs only what the library and the bundled CLI load at run time (the explorer and the CLI are built bundles)', () => {
    const installed = join(project, 'node_modules', 'mbsim');
    const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const deps = Object.keys(shipped.dependencies).sort();
    // Every bare import of the shipped JavaScript (static, dynamic or require) is a dependency, and every dependency is imported.
    const imported = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const f = join(dir, e.name);
        if (e.isDirectory()) walk(f);
        else if (/\.(c?js|d\.ts)$/.test(e.name)) {
          for (const m of readFileSync(f, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]([^'"./][^'"]*)['"]/g)) {
            const spec = m[1]!;
            if (spec.startsWith('node:') || spec === 'mbsim') continue;
            const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
            imported.add(name);
          }
        }
      }
    };
    walk(join(installed, 'dist'));
    const builtins = new Set(builtinModules);
    expect([...imported].filter((n) => !builtins.has(n)).sort()).toEqual(deps);
    // The explorer's editor and the CLI's argument parser are inside dist-web/ and dist/bin/*.cjs.
    for (const devOnly of ['codemirror', '@codemirror/view', 'commander', 'lz-string']) expect(existsSync(join(project, 'node_modules', devOnly)), devOnly).toBe(false);
  });

  test('the packed package.json has no prepare (issue 16): installing the tarball runs nothing and npm lists no install script; the checkout keeps its prepare', () => {
    const shipped = JSON.parse(readFileSync(join(project, 'node_modules', 'mbsim', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(Object.keys(shipped.scripts).filter((s) => /^(pre|post)?(install|prepare)$/.test(s))).toEqual([]);
    expect(installErr).not.toMatch(/allowScripts|install-scripts/);
    const own = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect([own.scripts.prepare, own.scripts._prepare]).toEqual([shipped.scripts._prepare, undefined]);
  });

  test('the API imports from an ES module and runs', () => {
    writeFileSync(join(project, 'use.mjs'), `import { parseSketch, instantiate, simulate, check, decodeWord, kernel, EXAMPLES } from 'mbsim';
const ex = EXAMPLES.find((e) => e.name === 'pipeline');
const p = instantiate(ex.build(), { K: 2 });
const k = kernel('one').barriers('b', 1, { count: 1 }).build();
console.log(JSON.stringify({ sim: simulate(p).verdict, check: check(p).verdict, word: decodeWord(0x7ffff3fe001ffffan).pending,
  sketch: parseSketch('kernel k\\n', 'k.mbk').diagnostics.length, built: k.barriers.length }));
`);
    const r = run('node', ['use.mjs'], project);
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ sim: 'ok', check: 'ok', word: 2, sketch: 1, built: 1 });
  }, 60_000);

  test("require('mbsim') from CommonJS (Node's require of an ES module, Node 20.19 and later)", () => {
    writeFileSync(join(project, 'use.cjs'), `const { parseSketch, instantiate, check, EXAMPLES } = require('mbsim');
const p = instantiate(EXAMPLES.find((e) => e.name === 'mechanism').build());
console.log(JSON.stringify({ check: check(p).verdict, sketch: parseSketch('kernel k\\n', 'k.mbk').diagnostics.length }));
`);
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    if (major === 20 && minor < 19) return; // no require of ES modules in this Node
    const r = run('node', ['use.cjs'], project);
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ check: 'ok', sketch: 1 });
  }, 60_000);

  test("README's first commands for an installed package: mbsim --help, mbsim examples, mbsim run mechanism, a bug example's file", () => {
    const help = run('npx', ['--no-install', 'mbsim', '--help'], project);
    expect(help.code).toBe(0);
    for (const verb of ['run', 'check', 'examples', 'decode', 'info', 'serve', 'lsp']) expect(help.out).toMatch(new RegExp(`^  ${verb} `, 'm'));
    const ex = run('npx', ['--no-install', 'mbsim', 'examples'], project);
    expect(ex.code).toBe(0);
    expect(ex.out).toMatch(/^pipeline /m);
    const mech = run('npx', ['--no-install', 'mbsim', 'run', 'mechanism'], project);
    expect(mech.code).toBe(0);
    expect(mech.out).toMatch(/verdict: ok/);
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    expect(readme).toContain('npx mbsim check node_modules/mbsim/examples/bugs/B01.mbk');
  }, 120_000);

  test('TypeScript type-checks against the package (exports map with types) and catches a misuse; every TypeScript block of README.md and docs/API.md compiles and runs as written', () => {
    const blocks = [...tsBlocks('README.md').map((b, i) => [`readme-${i + 1}`, b] as const), ...tsBlocks('docs/API.md').map((b, i) => [`api-${i + 1}`, b] as const)];
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    for (const [name, code] of blocks) writeFileSync(join(project, `${name}.ts`), code);
    writeFileSync(join(project, 'typed.ts'), `import { instantiate, simulate, check, type SimResult, type CheckResult, type Program } from 'mbsim';
import { EXAMPLES } from 'mbsim';
const p: Program = instantiate(EXAMPLES[0]!.build());
const r: SimResult = simulate(p, { seed: 1 });
const c: CheckResult = check(p, { maxStates: 1000 });
export const verdicts: string[] = [r.verdict, c.verdict];
`);
    writeFileSync(join(project, 'wrong.ts'), `import { simulate } from 'mbsim';\nsimulate('pipeline');\n`);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, outDir: 'out', skipLibCheck: true, typeRoots: [join(repo, 'node_modules', '@types')], types: ['node'] },
      include: ['*.ts'],
    }));
    // One compile (tsc is slow to start): the misuse is the only error, and everything else is emitted.
    const c = run('node', [tsc, '-p', '.'], project, 300_000);
    expect((c.out + c.err).trim().split('\n')).toEqual([expect.stringMatching(/^wrong\.ts\(2,10\): error TS2345: Argument of type 'string' is not assignable to parameter of type 'Program'/)]);
    for (const [name] of blocks) {
      const r = run('node', [join('out', `${name}.js`)], project);
      expect(`${name}: ${r.err}`).toBe(`${name}: `);
      expect(r.code, name).toBe(0);
    }
  }, 400_000);

  test('npx mbsim check works from the installed package (sequential and with worker threads)', () => {
    const ok = run('npx', ['--no-install', 'mbsim', 'check', 'pipeline'], project);
    expect(ok.out).toMatch(/verdict: OK/);
    expect(ok.code).toBe(0);
    const bug = run('npx', ['--no-install', 'mbsim', 'check', 'node_modules/mbsim/examples/bugs/B01.mbk'], project);
    expect(bug.out).toMatch(/verdict: HANG/);
    expect(bug.code).toBe(1);
    const par = run('npx', ['--no-install', 'mbsim', 'check', 'pipeline', '--set', 'K=3', '--workers', '2', '--json'], project);
    expect(par.err).toBe('');
    expect(JSON.parse(par.out).verdict).toBe('ok');
    // The first check wrote the code cache that the next ones read.
    expect(readdirSync(join(tmp, 'code-cache')).filter((f) => f.endsWith('-check.v8cache'))).toHaveLength(1);
  }, 120_000);

  test('mbsim lsp from the installed package: diagnostics and the checker\'s hazards over stdio', async () => {
    const lsp = new LspClient(join(project, 'node_modules', '.bin', 'mbsim'), ['lsp', '--stdio'], project);
    try {
      await lsp.request('initialize', { processId: process.pid, capabilities: {} });
      lsp.notify('initialized', {});
      const file = join(project, 'node_modules', 'mbsim', 'examples', 'bugs', 'B01.mbk');
      const uri = pathToFileURL(file).href;
      lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'mbk', version: 1, text: readFileSync(file, 'utf8') } });
      const m = await lsp.waitFor((x) => x.method === 'textDocument/publishDiagnostics' && (x.params as { diagnostics: { code: string }[] }).diagnostics.some((d) => d.code === 'hang'), 'the hang of B01');
      expect((m.params as { uri: string }).uri).toBe(uri);
      await lsp.request('shutdown', null);
      lsp.notify('exit', null);
      expect(await lsp.exited).toBe(0);
    } finally {
      lsp.child.kill();
    }
  }, 120_000);

  test('mbsim serve serves the explorer from the installed package', async () => {
    // The installed executable itself (npx would leave its child running when killed).
    const child = spawn(join(project, 'node_modules', '.bin', 'mbsim'), ['serve', '--port', '0'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await serverUrl(child);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/<html/i);
    } finally {
      // Waited for: at its exit the command writes its code cache into the folder afterAll removes.
      const gone = child.exitCode === null && child.signalCode === null ? new Promise((done) => child.once('exit', done)) : Promise.resolve();
      child.kill('SIGTERM');
      await gone;
    }
  });
});
