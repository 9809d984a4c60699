/**
 * `mbsim serve` answers only its own page: a foreign Host header (DNS rebinding) gets 421; every
 * response carries the CSP, nosniff and frame protection; `serve <dir>` and a vanished file give
 * no 500.
 */
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { CSP, isLoopbackHost, startServer, type RunningServer } from '../src/web/server/serve.js';

const dir = mkdtempSync(join(tmpdir(), 'mbsim-serve-'));
const root = join(dir, 'app');
mkdirSync(root);
writeFileSync(join(root, 'index.html'), '<!doctype html><title>t</title>');
const sketch = join(dir, 's.mbk');
writeFileSync(sketch, 'kernel k arch=sm_90a\n');

let srv: RunningServer;
beforeAll(async () => {
  srv = await startServer({ root, port: 0, file: sketch });
});
afterAll(async () => {
  await srv.close();
});

/** A GET with the given Host header (or none). */
function get(path: string, host: string | null): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port: srv.port, path, method: 'GET', setHost: false, headers: host === null ? {} : { Host: host } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += String(c)));
      res.on('end', () => done({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('Host header', () => {
  test('foreign, look-alike, wrong-port or missing Host: 421 and nothing served', async () => {
    for (const host of ['evil.example', `evil.example:${srv.port}`, `localhost.evil.example:${srv.port}`, `127.0.0.1.nip.io:${srv.port}`, 'localhost:1', `[::2]:${srv.port}`, '']) {
      for (const path of ['/', '/mbsim-file.json']) {
        const r = await get(path, host);
        expect(r.status, `${host} ${path}`).toBe(421);
        expect(r.body).toBe('misdirected request: this server answers only on localhost');
        expect(r.body).not.toContain('kernel k');
        expect(r.headers['content-security-policy']).toBe(CSP);
      }
    }
    // No Host at all: Node's HTTP server refuses the request itself.
    expect((await get('/mbsim-file.json', null)).status).toBe(400);
  });

  test('loopback names with the port (or none) are served', async () => {
    for (const host of [`localhost:${srv.port}`, `127.0.0.1:${srv.port}`, `[::1]:${srv.port}`, `LOCALHOST:${srv.port}`, 'localhost']) {
      const r = await get('/', host);
      expect(r.status, host).toBe(200);
      expect(r.body).toContain('<title>t</title>');
    }
    const f = await get('/mbsim-file.json', `localhost:${srv.port}`);
    expect(f.status).toBe(200);
    expect(JSON.parse(f.body)).toEqual({ name: 's.mbk', text: 'kernel k arch=sm_90a\n' });
  });

  test('isLoopbackHost', () => {
    expect(isLoopbackHost('localhost:80', 80)).toBe(true);
    expect(isLoopbackHost('localhost:81', 80)).toBe(false);
    expect(isLoopbackHost('[::1]', 80)).toBe(true);
    expect(isLoopbackHost('[::1]:80:80', 80)).toBe(false);
    expect(isLoopbackHost('0.0.0.0:80', 80)).toBe(false);
    expect(isLoopbackHost('0.0.0.0:80', 80, '0.0.0.0')).toBe(true);
    expect(isLoopbackHost(undefined, 80)).toBe(false);
  });
});

describe('security headers', () => {
  test('on pages, the file, 404s and 403s alike', async () => {
    const host = `localhost:${srv.port}`;
    for (const [path, status] of [['/', 200], ['/index.html', 200], ['/mbsim-file.json', 200], ['/nope.js', 404], ['/..%2Fs.mbk', 403]] as const) {
      const r = await get(path, host);
      expect(r.status, path).toBe(status);
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      expect(r.headers['x-frame-options']).toBe('DENY');
      expect(r.headers['content-security-policy']).toBe(CSP);
    }
    expect(CSP).toContain("frame-ancestors 'none'");
  });

  test("the header keeps every directive of the page's own <meta> policy (the explorer works under it)", () => {
    const html = readFileSync(resolve(__dirname, '..', 'src', 'web', 'index.html'), 'utf8');
    const meta = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1]!;
    const header = new Set(CSP.split('; '));
    for (const d of meta.split('; ')) expect(header.has(d), d).toBe(true);
  });
});

describe('serve FILE that is not a file', () => {
  test('serve <dir>: exit 2 with one line; startServer refuses it', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['serve', dir, '--port', '0'], { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
    expect(code).toBe(2);
    expect(err).toEqual([`mbsim: error: ${dir} is not a file (give a sketch file, .mbk, or a PTX file, .ptx; it is a directory)`]);
    await expect(startServer({ root, port: 0, file: dir })).rejects.toThrow('is not a file');
  });

  test('a file that vanishes or becomes a directory: 404, not 500', async () => {
    const f = join(dir, 'gone.mbk');
    writeFileSync(f, 'kernel g arch=sm_90a\n');
    const s2 = await startServer({ root, port: 0, file: f });
    try {
      const at = (host: string) => new Promise<number>((done, fail) => {
        request({ host: '127.0.0.1', port: s2.port, path: '/mbsim-file.json', headers: { Host: host } }, (res) => {
          res.resume();
          done(res.statusCode!);
        }).on('error', fail).end();
      });
      expect(await at(`localhost:${s2.port}`)).toBe(200);
      rmSync(f);
      mkdirSync(f);
      expect(await at(`localhost:${s2.port}`)).toBe(404);
      rmSync(f, { recursive: true });
      expect(await at(`localhost:${s2.port}`)).toBe(404);
    } finally {
      await s2.close();
    }
  });
});
