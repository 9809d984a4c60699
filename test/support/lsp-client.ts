/**
 * A minimal Language Server Protocol client for tests: spawns a server, frames JSON-RPC messages
 * with `Content-Length` headers over its stdin/stdout, matches responses to requests and keeps
 * every notification the server sends.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** A JSON-RPC message as the server sends it. */
export interface RpcMessage {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/** A running server and the client's side of the conversation. */
export class LspClient {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every notification received, in order. */
  readonly notifications: RpcMessage[] = [];
  stderr = '';
  private buf = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, (m: RpcMessage) => void>();
  private waiters: { test: (m: RpcMessage) => boolean; done: (m: RpcMessage) => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor(command: string, args: string[], cwd: string) {
    this.child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (c: Buffer) => this.feed(c));
    this.child.stderr.on('data', (c: Buffer) => (this.stderr += String(c)));
    this.exited = new Promise((done) => this.child.on('exit', (code) => done(code)));
  }

  private feed(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /Content-Length: (\d+)/i.exec(this.buf.subarray(0, end).toString('ascii'));
      if (!m) throw new Error(`bad header from the server: ${this.buf.subarray(0, end).toString()}`);
      const len = Number(m[1]);
      if (this.buf.length < end + 4 + len) return;
      const msg = JSON.parse(this.buf.subarray(end + 4, end + 4 + len).toString('utf8')) as RpcMessage;
      this.buf = this.buf.subarray(end + 4 + len);
      this.receive(msg);
    }
  }

  private receive(msg: RpcMessage): void {
    if (msg.id !== undefined && msg.method === undefined) {
      this.pending.get(msg.id)?.(msg);
      this.pending.delete(msg.id);
      return;
    }
    // A request from the server (e.g. client/registerCapability): answer with null.
    if (msg.id !== undefined) this.send({ jsonrpc: '2.0', id: msg.id, result: null });
    this.notifications.push(msg);
    this.waiters = this.waiters.filter((w) => (w.test(msg) ? (w.done(msg), false) : true));
  }

  private send(obj: object): void {
    const body = Buffer.from(JSON.stringify(obj), 'utf8');
    this.child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  /** Sends a request; resolves with its result (rejects with the error the server answered). */
  request<T = unknown>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((done, fail) => {
      this.pending.set(id, (m) => (m.error ? fail(new Error(`${method}: ${m.error.message}`)) : done(m.result as T)));
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  /** The first notification (already received or still to come) for which `test` holds. */
  waitFor(test: (m: RpcMessage) => boolean, what: string, timeoutMs = 60_000): Promise<RpcMessage> {
    const seen = this.notifications.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((done, fail) => {
      const t = setTimeout(() => fail(new Error(`no ${what} from the server within ${timeoutMs} ms; stderr: ${this.stderr}`)), timeoutMs);
      this.waiters.push({ test, done: (m) => (clearTimeout(t), done(m)) });
    });
  }
}
