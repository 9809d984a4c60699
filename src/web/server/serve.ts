/**
 * A tiny static file server for the built explorer (dist-web/), for `mbsim serve [--port N] [FILE]`.
 * Listens on 127.0.0.1 only. With `file`, it also answers `GET /mbsim-file.json` with
 * `{ name, text }` of that sketch (read on each request), which the app opens when the URL has no
 * hash; a plain static server has no such file and the app opens its default example. A PTX file
 * is answered with `{ name, text, launch }` (the launch its sidecars and `mbsim serve`'s flags give),
 * which the app translates as `mbsim run | check` do (src/ptxi), or 422 with the reason it does not.
 *
 * It answers only its own page: a request whose `Host` header is not a loopback name
 * (`localhost`, `127.0.0.1`, `[::1]`, or the bound host, with the server's port) gets 421, so a page
 * on another origin cannot read the sketch through DNS rebinding. Every response carries
 * {@link SECURITY_HEADERS}: a Content-Security-Policy under which the explorer works (its scripts,
 * module worker and styles from the same origin, CodeMirror's inline styles, data: images) and no
 * other origin may frame it, `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff`.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { LIMITS } from '../../lang/limits.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Default port of `mbsim serve`. */
export const DEFAULT_PORT = 5177;

export interface ServeOptions {
  /** Port (default {@link DEFAULT_PORT}); 0 picks a free one. */
  port?: number;
  /** Directory of the built app (default: `dist-web/` of the repository). */
  root?: string;
  /** A sketch file (.mbk) or a PTX file (with {@link ServeOptions.ptxLaunch}) the app opens when its URL has no hash. */
  file?: string;
  /**
   * `file` is PTX: the launch to translate its text (as read now) with, or an `Error` whose message
   * says why it does not translate (`mbsim serve` passes the CLI's check: the sidecars under the
   * flags, file:line:col). Called again whenever the file or its `.launch.json` changed.
   */
  ptxLaunch?: (text: string) => unknown;
  /** Host to bind (default 127.0.0.1). */
  host?: string;
}

/**
 * The Content-Security-Policy of every response: the page's own `<meta>` policy (src/web/index.html)
 * plus what only a header can say (`frame-ancestors`), with the worker and form targets spelled out.
 */
export const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers sent with every response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * The host a request's target names: the `Host` header's job for the usual origin-form target
 * (`/path`), the target's own authority for the absolute form a proxy sends (`http://host/path`,
 * which RFC 9112 section 3.2.2 says wins over `Host`); undefined for anything else (`*`).
 */
function targetAuthority(url: string | undefined): string | undefined {
  if (url === undefined || url.startsWith('/')) return '127.0.0.1';
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** How many Host header fields a request has (`rawHeaders`: name, value, name, value, …). */
export function hostHeaders(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') n++;
  return n;
}

/**
 * Whether a `Host` header names this server on the loopback interface: `localhost`, `127.0.0.1`,
 * `[::1]` or `bound` (the host it listens on), each either without a port or with `port`.
 */
export function isLoopbackHost(host: string | undefined, port: number, bound = '127.0.0.1'): boolean {
  if (!host) return false;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim());
  if (!m) return false;
  if (m[2] !== undefined && Number(m[2]) !== port) return false;
  const name = m[1]!.toLowerCase();
  const boundName = bound.includes(':') && !bound.startsWith('[') ? `[${bound.toLowerCase()}]` : bound.toLowerCase();
  return name === 'localhost' || name === '127.0.0.1' || name === '[::1]' || name === boundName;
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
  '.mbk': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/** The repository's `dist-web/`, found from this module's location (src/web/server or dist/web/server). */
export function defaultRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist-web');
    dir = dirname(dir);
  }
  return resolve('dist-web');
}

/** The tag `startServer` adds to index.html when it serves a file: the page then fetches /mbsim-file.json. */
export const FILE_META = '<meta name="mbsim-file" content="mbsim-file.json" />';

/**
 * Bytes of a sketch the server reads at most: what the CLI's loader reads (LIMITS.fileChars
 * characters of at most 4 UTF-8 bytes each, and one more); a larger file is refused with 413.
 */
export const MAX_SKETCH_BYTES = LIMITS.fileChars * 4 + 4;

/** Bytes of a served PTX file read at most (production kernels with debug sections are a few MiB). */
export const MAX_PTX_BYTES = 16 << 20;

/** What `/mbsim-file.json` answers: the status and its body. */
interface SketchAnswer { status: 200 | 404 | 413 | 422; body: string }

/**
 * The answers of `/mbsim-file.json` for one file: read again only when its size, mtime or inode
 * changed, one read at a time (concurrent requests share the read in progress), at most
 * {@link MAX_SKETCH_BYTES}: 32 requests for a 100 MB file cost one stat each, not 32 reads.
 */
function sketchReader(ptxLaunch?: (text: string) => unknown): (file: string) => Promise<SketchAnswer> {
  const max = ptxLaunch ? MAX_PTX_BYTES : MAX_SKETCH_BYTES;
  const what = ptxLaunch ? 'a PTX file' : 'a sketch';
  let cached: { key: string; answer: SketchAnswer } | null = null;
  let reading: Promise<SketchAnswer> | null = null;
  const read = async (file: string): Promise<SketchAnswer> => {
    let st;
    try {
      st = await stat(file);
    } catch {
      return { status: 404, body: `cannot read ${basename(file)}` };
    }
    if (!st.isFile()) return { status: 404, body: `cannot read ${basename(file)}` };
    let key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    if (ptxLaunch) {
      // The launch also comes from FILE.launch.json: a change of it is a change of the answer.
      const side = await stat(`${file}.launch.json`).catch(() => null);
      key += side ? `|${side.dev}:${side.ino}:${side.size}:${side.mtimeMs}` : '|none';
    }
    if (cached?.key === key) return cached.answer;
    let answer: SketchAnswer;
    if (st.size > max) {
      answer = { status: 413, body: `${basename(file)} has ${st.size.toLocaleString('en-US')} bytes; ${what} may have at most ${max.toLocaleString('en-US')}` };
    } else {
      try {
        const fh = await open(file, 'r');
        try {
          const buf = Buffer.alloc(max + 1);
          const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
          const text = buf.subarray(0, bytesRead).toString('utf8');
          answer = bytesRead > max
            ? { status: 413, body: `${basename(file)} has more than ${max.toLocaleString('en-US')} bytes, the most ${what} may have` }
            : ptxLaunch ? ptxAnswer(file, text, ptxLaunch)
            : { status: 200, body: JSON.stringify({ name: basename(file), text }) };
        } finally {
          await fh.close();
        }
      } catch {
        return { status: 404, body: `cannot read ${basename(file)}` };
      }
    }
    cached = { key, answer };
    return answer;
  };
  return (file) => {
    reading ??= read(file).finally(() => (reading = null));
    return reading;
  };
}

/** The answer for a PTX file: its text and launch, or 422 with why it does not translate. */
function ptxAnswer(file: string, text: string, ptxLaunch: (text: string) => unknown): SketchAnswer {
  let launch: unknown;
  try {
    launch = ptxLaunch(text);
  } catch (err) {
    return { status: 422, body: String((err as Error)?.message ?? err) };
  }
  return { status: 200, body: JSON.stringify({ name: basename(file), text, launch }) };
}

/** Starts the server; resolves once it listens. Rejects if the root has no index.html or the port is taken. */
export async function startServer(opts: ServeOptions = {}): Promise<RunningServer> {
  const root = resolve(opts.root ?? defaultRoot());
  const host = opts.host ?? '127.0.0.1';
  if (!existsSync(join(root, 'index.html'))) {
    throw new Error(`no built explorer in ${root} (run \`npx vite build\` first)`);
  }
  const file = opts.file ? resolve(opts.file) : undefined;
  if (file && !existsSync(file)) throw new Error(`no such file: ${opts.file}`);
  if (file && !statSync(file).isFile()) throw new Error(`${opts.file} is not a file (give a sketch file, .mbk)`);
  let port = 0;

  const headers = (type: string, extra: Record<string, string> = {}) => ({
    'Content-Type': type,
    ...SECURITY_HEADERS,
    'Cache-Control': 'no-cache',
    ...extra,
  });

  const sketchBody = sketchReader(opts.ptxLaunch);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // RFC 9112 §3.2: more than one Host is a bad request (Node keeps the first and drops the rest).
    if (hostHeaders(req.rawHeaders) > 1) {
      res.writeHead(400, headers('text/plain; charset=utf-8'));
      res.end('bad request: more than one Host header');
      return;
    }
    if (!isLoopbackHost(req.headers.host, port, host) || !isLoopbackHost(targetAuthority(req.url), port, host)) {
      res.writeHead(421, headers('text/plain; charset=utf-8'));
      res.end('misdirected request: this server answers only on localhost');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, headers('text/plain; charset=utf-8', { Allow: 'GET, HEAD' }));
      res.end('method not allowed');
      return;
    }
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    } catch {
      res.writeHead(400, headers('text/plain; charset=utf-8'));
      res.end('bad request');
      return;
    }
    if (path === '/mbsim-file.json') {
      if (!file) {
        res.writeHead(404, headers('text/plain; charset=utf-8'));
        res.end('no file');
        return;
      }
      const got = await sketchBody(file);
      if (got.status !== 200) {
        // Gone or no longer a file (404: the app opens its default example), too large (413), or a
        // PTX file that no longer translates for its launch (422, the CLI's message).
        res.writeHead(got.status, headers('text/plain; charset=utf-8'));
        res.end(got.body);
        return;
      }
      res.writeHead(200, headers(TYPES['.json']!));
      res.end(req.method === 'HEAD' ? undefined : got.body);
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const full = resolve(root, `.${path}`);
    if (full !== root && !full.startsWith(root + sep)) {
      res.writeHead(403, headers('text/plain; charset=utf-8'));
      res.end('forbidden');
      return;
    }
    if (file && full === join(root, 'index.html')) {
      // The page asks for mbsim-file.json only when its index says there is one (so a plain static
      // server, which has none, never answers a 404 to it).
      const html = (await readFile(full, 'utf8')).replace('</head>', `${FILE_META}</head>`);
      res.writeHead(200, headers(TYPES['.html']!, { 'Content-Length': String(Buffer.byteLength(html)) }));
      res.end(req.method === 'HEAD' ? undefined : html);
      return;
    }
    try {
      const st = await stat(full);
      if (!st.isFile()) throw new Error('not a file');
      res.writeHead(200, headers(TYPES[extname(full).toLowerCase()] ?? 'application/octet-stream', { 'Content-Length': String(st.size) }));
      if (req.method === 'HEAD') return void res.end();
      createReadStream(full).on('error', () => res.destroy()).pipe(res);
    } catch {
      res.writeHead(404, headers('text/plain; charset=utf-8'));
      res.end('not found');
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { ...SECURITY_HEADERS });
      res.end();
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? DEFAULT_PORT, host, () => {
      server.off('error', fail);
      ok();
    });
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/`,
    port,
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections?.();
      server.close(() => ok());
    }),
  };
}
