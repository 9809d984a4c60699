/**
 * A tiny static file server for the built explorer (dist-web/), for `mbsim serve [--port N] [FILE]`.
 * Listens on 127.0.0.1 only. With `file`, it also answers `GET /mbsim-file.json` with
 * `{ name, text }` of that sketch (read on each request), which the app opens when the URL has no
 * hash; a plain static server has no such file and the app opens its default example.
 */
import { createReadStream, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
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
  /** A sketch file (.mbk) the app opens when its URL has no hash. */
  file?: string;
  /** Host to bind (default 127.0.0.1). */
  host?: string;
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

/** Starts the server; resolves once it listens. Rejects if the root has no index.html or the port is taken. */
export async function startServer(opts: ServeOptions = {}): Promise<RunningServer> {
  const root = resolve(opts.root ?? defaultRoot());
  const host = opts.host ?? '127.0.0.1';
  if (!existsSync(join(root, 'index.html'))) {
    throw new Error(`no built explorer in ${root} (run \`npx vite build\` first)`);
  }
  const file = opts.file ? resolve(opts.file) : undefined;
  if (file && !existsSync(file)) throw new Error(`no such file: ${opts.file}`);

  const headers = (type: string, extra: Record<string, string> = {}) => ({
    'Content-Type': type,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
    ...extra,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
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
      try {
        const text = await readFile(file, 'utf8');
        const body = JSON.stringify({ name: basename(file), text });
        res.writeHead(200, headers(TYPES['.json']!));
        res.end(req.method === 'HEAD' ? undefined : body);
      } catch (err) {
        res.writeHead(500, headers('text/plain; charset=utf-8'));
        res.end(`cannot read ${basename(file)}: ${(err as Error).message}`);
      }
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const full = resolve(root, `.${path}`);
    if (full !== root && !full.startsWith(root + sep)) {
      res.writeHead(403, headers('text/plain; charset=utf-8'));
      res.end('forbidden');
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
      if (!res.headersSent) res.writeHead(500);
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
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/`,
    port,
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections?.();
      server.close(() => ok());
    }),
  };
}
