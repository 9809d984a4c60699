// `mbsim serve FILE.ptx`: the server answers the PTX file with the launch its sidecars and the
// flags give (as `run` / `check` take it), the explorer's engine simulates and checks what it
// answers, and bad input exits 2 at file:line:col as for `run` / `check`.
import { request } from 'node:http';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { servedPtxLaunch, type PtxFlags } from '../src/cli/ptx-load.js';
import { startServer, type RunningServer } from '../src/web/server/serve.js';
import { handle, type PackedCheck, type WorkerReply } from '../src/web/engine-protocol.js';
import type { PackedModel } from '../src/web/model.js';
import { decodeView, encodeView, launchOf, defaultView, type SourceRef } from '../src/web/share.js';
import { load } from '../src/web/sources.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

const dir = mkdtempSync(join(tmpdir(), 'mbsim-serve-ptx-'));
const root = join(dir, 'app');
mkdirSync(root);
writeFileSync(join(root, 'index.html'), '<!doctype html><head><title>t</title></head>');
/** A copy of a fixture (and its `.launch.json`) in the temporary folder. */
function copy(from: string, name: string, sidecar = true): string {
  const f = join(dir, name);
  copyFileSync(from, f);
  if (sidecar) copyFileSync(`${from}.launch.json`, `${f}.launch.json`);
  return f;
}
const good = copy('test/fixtures/ptx/tma_pipeline.ptx', 'pipe.ptx');
const planted = copy('test/fixtures/ptx/planted/tma_pipeline.expect_tx.ptx', 'planted.ptx');

const servers: RunningServer[] = [];
async function serve(file: string, flags: PtxFlags = {}): Promise<RunningServer> {
  const s = await startServer({ root, port: 0, file, ptxLaunch: (text) => servedPtxLaunch(file, flags, text) });
  servers.push(s);
  return s;
}
afterAll(async () => {
  for (const s of servers) await s.close();
});

function get(srv: RunningServer, path: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port: srv.port, path, method: 'GET', headers: { Host: `localhost:${srv.port}` } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += String(c)));
      res.on('end', () => done({ status: res.statusCode!, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

/** What the page does with `/mbsim-file.json`: a PTX source of its text and its (validated) launch. */
async function served(srv: RunningServer): Promise<SourceRef & { kind: 'ptx' }> {
  const r = await get(srv, '/mbsim-file.json');
  expect(r.status, r.body).toBe(200);
  const j = JSON.parse(r.body) as { name: string; text: string; launch: unknown };
  const launch = launchOf(j.launch);
  expect(launch).not.toBeNull();
  return { kind: 'ptx', name: j.name, text: j.text, launch: launch! };
}

/** The explorer engine's answer to one request (what its worker posts back). */
function engine<T extends WorkerReply['type']>(req: Parameters<typeof handle>[0], want: T): Extract<WorkerReply, { type: T }> {
  let got: WorkerReply | undefined;
  handle(req, (m) => {
    if (m.type !== 'progress' && m.type !== 'sim-progress') got = m;
  });
  if (got?.type === 'error') throw new Error(got.error);
  expect(got?.type).toBe(want);
  return got as Extract<WorkerReply, { type: T }>;
}
const BOUNDS = { maxStates: 200_000, timeoutMs: 60_000, maxMemory: 1 << 30 };

describe('mbsim serve FILE.ptx over HTTP', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await serve(good);
  });

  it('answers the PTX text with the launch of its .launch.json; the page translates it as run does', async () => {
    const src = await served(srv);
    expect(src.name).toBe('pipe.ptx');
    expect(src.text).toBe(readFileSync(good, 'utf8'));
    expect(src.launch).toMatchObject({ kernel: 'tma_pipeline', block: 128 });
    const l = load(src);
    expect(l.diagnostics).toEqual([]);
    expect(l.kernel?.name).toBe('tma_pipeline');
    expect(l.kernel?.roles[0]?.warps).toBe(4);
    // The page marks the text as served: its index carries the file tag.
    expect((await get(srv, '/')).body).toContain('mbsim-file');
  });

  it("the engine's simulation (timeline) and check answer for the served kernel, located on PTX lines", async () => {
    const src = await served(srv);
    const sim = engine({ type: 'sim', id: 1, src, params: {} }, 'sim').model as PackedModel;
    expect(sim.sim.verdict).toBe('ok');
    expect(sim.events.length).toBeGreaterThan(50);
    expect(sim.events.some((e) => 'loc' in e && (e as { loc?: { file?: string; line: number } }).loc?.file === 'pipe.ptx')).toBe(true);
    const chk = engine({ type: 'check', id: 2, src, params: {}, bounds: BOUNDS }, 'check').result as PackedCheck;
    expect(chk.verdict).toBe('ok');
    // A parameter override from the page (param_2: the loop count) reaches the translation's parameter.
    const two = engine({ type: 'sim', id: 3, src, params: { param_2: 2 } }, 'sim').model as PackedModel;
    expect(two.events.length).toBeLessThan(sim.events.length);
  }, 120_000);

  it('the planted twin: the check from the page finds the hang at the PTX line', async () => {
    const s2 = await serve(planted);
    const src = await served(s2);
    const chk = engine({ type: 'check', id: 4, src, params: {}, bounds: BOUNDS }, 'check').result as PackedCheck;
    expect(chk.verdict).toBe('hang');
    const h = chk.hazards[0]!;
    expect(JSON.stringify(h)).toContain('"file":"planted.ptx"');
  }, 120_000);

  it('flags win over the sidecar, as for run and check', async () => {
    const s3 = await serve(good, { param: { param_2: 2 } });
    const src = await served(s3);
    expect(Object.values(src.launch.params ?? {})).toContain(2);
    expect(load(src).kernel?.params.find((p) => p.name === 'param_2')?.value).toBe(2);
  });

  it('a file edited into a bad launch is answered 422 with the CLI message; fixed, 200 again', async () => {
    const f = copy('test/fixtures/ptx/tma_pipeline.ptx', 'edit.ptx', false);
    writeFileSync(`${f}.launch.json`, '{"kernel": "tma_pipeline", "block": 128, "params": {"param_2": 4}, "tensorMaps": {"param_0": 16384}}');
    const s4 = await serve(f);
    expect((await get(s4, '/mbsim-file.json')).status).toBe(200);
    writeFileSync(`${f}.launch.json`, '{"kernel": "tma_pipeline", "blok": 128}');
    const bad = await get(s4, '/mbsim-file.json');
    expect(bad.status).toBe(422);
    expect(bad.body).toContain(`${f}.launch.json:1:28: error: launch: unknown key "blok" (did you mean "block"?)`);
    writeFileSync(`${f}.launch.json`, '{"kernel": "tma_pipeline", "block": 128, "params": {"param_2": 3}, "tensorMaps": {"param_0": 16384}}');
    expect((await get(s4, '/mbsim-file.json')).status).toBe(200);
  });

  it('a share link carries the PTX text and its launch; a malformed launch is refused', () => {
    const src: SourceRef = { kind: 'ptx', name: 'pipe.ptx', text: 'x', launch: { kernel: 'k', block: 64, params: { '2': 4 } } };
    const { view, warnings } = decodeView(encodeView({ ...defaultView(), source: src }), () => false, () => false);
    expect(warnings).toEqual([]);
    expect(view.source).toEqual(src);
    expect(launchOf('{"block": "x"}')).toBeNull();
    expect(launchOf('{"evil": 1}')).toBeNull();
    expect(launchOf({ params: { __proto__: 1 } })).toEqual({ params: {} });
  });
});

describe('mbsim serve FILE.ptx: bad input exits 2 as for run and check', () => {
  it('a bad launch line: file:line:col and a caret, nothing served', async () => {
    const f = join(dir, 'badline.ptx');
    const text = readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8');
    writeFileSync(f, `${text}// # launch: {"kernel": "tma_pipeline", "block": 100}\n`);
    const line = text.split('\n').length;
    const r = await cli(['serve', f, '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}:${line}:50: error: launch: "block": 100: mbsim runs whole warps`);
    expect(r.err).toContain('^');
    const c = await cli(['check', f]);
    expect(c.code).toBe(2);
    expect(c.err).toBe(r.err);
  });

  it('no launch: the same message as check; a PTX flag on a sketch is refused', async () => {
    const f = copy('test/fixtures/ptx/tma_pipeline.ptx', 'nolaunch.ptx', false);
    const r = await cli(['serve', f, '--port', '0']);
    const c = await cli(['check', f]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(c.err);
    const s = join(dir, 's.mbk');
    writeFileSync(s, 'kernel k arch=sm_90a\n');
    const k = await cli(['serve', s, '--block', '64', '--port', '0']);
    expect(k.code).toBe(2);
    expect(k.err).toContain('--block is a launch flag of PTX files');
  });

  it('a parameter the kernel needs from its start and the launch lacks: exit 2 before listening, the same line as check', async () => {
    const f = copy('test/fixtures/ptx/ring.ptx', 'noparam.ptx', false);
    const r = await cli(['serve', f, '--block', '64', '--port', '0']);
    const c = await cli(['check', f, '--block', '64']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/noparam\.ptx:\d+:\d+: error: kernel parameter param_2 has no value, and a branch, an address or a count of the kernel depends on it here: give --param param_2=VALUE/);
    expect(r.err).toBe(c.err);
  });

  it('a PTX parse error: file:line:col', async () => {
    const f = join(dir, 'broken.ptx');
    writeFileSync(f, '.version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k( { ret; }\n');
    const r = await cli(['serve', f, '--port', '0', '--block', '32']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`${f.replace(/[.]/g, '\\.')}:4:\\d+: error`));
    expect(r.err).toBe((await cli(['check', f, '--block', '32'])).err);
  });
});

describe('mbsim serve: a sketch with errors is served, a PTX file with a syntax error is refused (docs/EXPLORER.md)', () => {
  it('the sketch reaches the server (here: a port in use), the PTX file stops at its located error; --help says so', async () => {
    const busy = await serve(good);
    const sk = join(dir, 'broken.mbk');
    writeFileSync(sk, 'kernel k arch=sm_90a\nrole p per=one:\n    mbarrier.arrive b[0] $\n');
    const s = await cli(['serve', sk, '--port', String(busy.port)]);
    expect(s.code).toBe(2);
    expect(s.err).not.toContain('broken.mbk:');
    expect(s.err).toMatch(/port \d+ is in use|the explorer is not built/);
    // The served sketch's text comes back as it is, errors and all: the page shows them.
    const sketchSrv = await startServer({ root, port: 0, file: sk });
    servers.push(sketchSrv);
    const r = await get(sketchSrv, '/mbsim-file.json');
    expect([r.status, JSON.parse(r.body).text]).toEqual([200, readFileSync(sk, 'utf8')]);
    const px = join(dir, 'broken2.ptx');
    writeFileSync(px, '.version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k( { ret; }\n');
    const p = await cli(['serve', px, '--port', String(busy.port), '--block', '32']);
    expect(p.code).toBe(2);
    expect(p.err).toMatch(/broken2\.ptx:4:\d+: error/);
    const help = await cli(['serve', '--help']);
    expect(help.out).toContain('A sketch is served even with errors');
    expect(help.out).toContain('a PTX syntax error is refused with exit 2 at file:line:col');
  });
});
