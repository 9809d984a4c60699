/**
 * A seventh hostile trial (trial 6): line breaks smuggled into one-line output (a sketch's kernel
 * name, a file name on the command line), invisible characters in PTX, the Machine's public
 * methods given garbage, and the language server fed malformed JSON-RPC (params of the wrong
 * shape, headers it cannot frame, a Content-Length of 10^14). Each case failed before its fix.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import * as M from '../src/index.js';
import { startLanguageServer } from '../src/lsp/server.js';
import { checkedFraming, MAX_MESSAGE_BYTES } from '../src/lsp/framing.js';

const dir = mkdtempSync(join(tmpdir(), 'mbsim-trial6-'));
const file = (name: string, text: string | Buffer) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};

/** The CLI in process: exit code, stdout and stderr. */
async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (x) => out.push(x), err: (x) => err.push(x), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The error `f` throws (fails when it throws none). */
function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
}

const HANG = 'barrier b[1] count=1\nrole r per=one:\n    mbarrier.try_wait.parity b[0], 0\n';

describe('a line break in the kernel name or description cannot forge a line of the report', () => {
  test('kernel "k\\nverdict: OK" / description="…\\r…": E-option-value at the string (check, run, info and --format short printed a line "verdict: OK")', async () => {
    const cases: [string, string, string][] = [
      ['kernel "k\\nverdict: OK" arch=sm_90a\n', '1:8', 'the kernel name contains a line break (U+000A): it must be one line'],
      ['kernel k arch=sm_90a description="a\\r\\u001b[2Jb"\n', '1:34', 'the description contains a line break (U+000D): it must be one line'],
      ['kernel k arch=sm_90a description="a\\u2028b"\n', '1:34', 'the description contains a line break (U+2028): it must be one line'],
    ];
    for (const [head, at, msg] of cases) {
      const f = file('forge.mbk', head + HANG);
      for (const verb of [['check'], ['run'], ['info'], ['check', '--format', 'short']]) {
        const r = await cli([...verb, f]);
        expect(r.code, verb.join(' ')).toBe(2);
        expect(r.err).toContain(`forge.mbk:${at}: error[E-option-value]: ${msg}`);
        expect(r.out + r.err).not.toMatch(/^verdict: OK/m);
      }
    }
    // A one-line description with quotes, a tab and an escaped ESC stays fine (the ESC printed as an escape).
    const ok = await cli(['info', file('fine.mbk', `kernel "k-1" arch=sm_90a description="a \\"quoted\\"\\té\\u001b[2J"\n${HANG}`)]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('a "quoted"\té\\u001b[2J');
  });
});

describe('a command-line argument with a line break', () => {
  test('a sketch named "evil\\nverdict: OK\\n.mbk", --set, decode: exit 2, one line with the break escaped (the name was printed raw, forging lines)', async () => {
    const name = file('evil\nverdict: OK\n.mbk', `kernel k arch=sm_90a\n${HANG}`);
    for (const args of [['check', name], ['check', name, '--format', 'short'], ['run', name], ['info', name], ['check', 'pipeline', '--set', 'K\n=1'], ['decode', '0\r1']]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/^mbsim: error: argument \d \('.*\\[nr].*'\) contains a line break: mbsim takes no file name or value with one \(rename the file\)$/);
    }
    expect((await cli(['check', name])).err).toContain("argument 2 ('" + name.replace(/\n/g, '\\n') + "')");
  });
});

describe('PTX: an invisible character is named by its code point', () => {
  const PTX = (extra: string) => `.version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\tret;${extra}\n}\n`;
  test('a zero-width space, a combining accent, a no-break space: U+200B / U+0301 / U+00A0 (the quotes looked empty)', async () => {
    for (const [ch, cp] of [['\u200b', 'U+200B'], ['\u0301', 'U+0301'], ['\u00a0', 'U+00A0'], ['\u2062', 'U+2062']] as const) {
      const r = await cli(['info', file('inv.ptx', PTX(ch))]);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')[0]).toBe(`${join(dir, 'inv.ptx')}:6:6: error[E-ptx-lex]: unexpected character '${ch}' (${cp})`);
    }
    // A visible character, and a control character, keep their short form.
    expect((await cli(['info', file('vis.ptx', PTX('é'))])).err.split('\n')[0]).toMatch(/error\[E-ptx-lex\]: unexpected character 'é'$/);
    expect((await cli(['info', file('nul.ptx', PTX('\u0007'))])).err.split('\n')[0]).toMatch(/error\[E-ptx-lex\]: unexpected character '\\u0007' \(U\+0007\)$/);
  });
});

describe('Machine.step / enabled / finished given garbage: a TypeError naming the method and argument', () => {
  const p = M.instantiate(M.parseSketch(`kernel k arch=sm_90a\n${HANG}`, 'k.mbk').kernel!);
  const m = new M.Machine(p);
  test('a choice that is null, of another kind, or an agent out of range (it threw "Cannot read properties of null (reading \'kind\')")', () => {
    const s = m.initial();
    for (const c of [null, undefined, 5, {}, { kind: 'bogus' }, { kind: 'agent', agent: 7 }, { kind: 'agent', agent: -1 }, { kind: 'agent', agent: 0.5 }, { kind: 'async' }]) {
      const e = thrown(() => m.step(s, c as never));
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toMatch(/^Machine\.step: choice must be a Choice from Machine\.enabled \(\{ kind: 'agent', agent: 0\.\.0 \} or \{ kind: 'async', id \}\), got /);
    }
    const m2 = new M.Machine(M.instantiate(M.parseSketch('kernel k arch=sm_90a\nbarrier b[1] count=1\nrole r per=one:\n    mbarrier.arrive b[0]\n', 'k.mbk').kernel!));
    const s2 = m2.initial();
    expect(m2.step(s2, m2.enabled(s2)[0]!).events.map((e) => e.e)).toContain('arrive');
  });
  test('a state that is not one (it threw "Cannot read properties of undefined (reading \'length\')")', () => {
    for (const [f, name] of [[(v: never) => m.enabled(v), 'Machine.enabled'], [(v: never) => m.finished(v), 'Machine.finished'], [(v: never) => m.step(v, { kind: 'agent', agent: 0 }), 'Machine.step']] as const) {
      for (const v of [null, {}, 3, { agents: 'x' }]) {
        const e = thrown(() => f(v as never));
        expect(e).toBeInstanceOf(TypeError);
        expect(e.message).toMatch(new RegExp(`^${name.replace('.', '\\.')}: s must be a MachineState \\(from Machine.initial or Machine.step\\), got `));
      }
    }
    expect(m.finished(m.initial())).toBe(false);
  });
});

/** A language server in process on pipes: send framed messages or raw bytes, read what it answers. */
function server() {
  const input = new PassThrough();
  const output = new PassThrough();
  const errors: string[] = [];
  let buf = Buffer.alloc(0);
  const got: { id?: number; method?: string; result?: unknown; error?: { code: number; message: string }; params?: { type?: number; message?: string } }[] = [];
  output.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/Content-Length: (\d+)/.exec(buf.subarray(0, end).toString())![1]);
      if (buf.length < end + 4 + len) return;
      got.push(JSON.parse(buf.subarray(end + 4, end + 4 + len).toString()));
      buf = buf.subarray(end + 4 + len);
    }
  });
  const exited = startLanguageServer({ input, output, checkDelayMs: null, error: (l) => errors.push(l) });
  const raw = (b: string | Buffer) => input.write(b);
  const send = (o: object) => {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...o }));
    raw(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
  };
  const answer = async (id: number) => {
    for (let i = 0; i < 200; i++) {
      const a = got.find((m) => m.id === id && m.method === undefined);
      if (a) return a;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no answer to ${id}`);
  };
  return { send, raw, answer, got, errors, exited, input };
}

describe('lsp: params of the wrong shape', () => {
  test('requests: InvalidParams naming the method and the field (it answered -32603 "Cannot read properties of undefined (reading \'uri\')")', async () => {
    const s = server();
    s.send({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });
    await s.answer(1);
    s.send({ method: 'textDocument/didOpen', params: { textDocument: { uri: 'file:///x.mbk', languageId: 'mbk', version: 1, text: `kernel k arch=sm_90a\n${HANG}` } } });
    const doc = { uri: 'file:///x.mbk' };
    const cases: [string, unknown, string][] = [
      ['textDocument/hover', null, 'textDocument/hover: params must be an object'],
      ['textDocument/hover', {}, 'textDocument/hover: params.textDocument.uri must be a string'],
      ['textDocument/definition', { textDocument: { uri: 5 }, position: { line: 0, character: 0 } }, 'textDocument/definition: params.textDocument.uri must be a string'],
      ['textDocument/completion', { textDocument: doc, position: { line: -1, character: 1e300 } }, 'textDocument/completion: params.position must be { line, character } of non-negative integers'],
      ['textDocument/references', { textDocument: doc, position: { line: 0, character: 8 } }, 'textDocument/references: params.context.includeDeclaration must be a boolean'],
      ['textDocument/documentSymbol', { textDocument: null }, 'textDocument/documentSymbol: params.textDocument.uri must be a string'],
    ];
    let id = 10;
    for (const [method, params, message] of cases) {
      s.send({ id: ++id, method, params });
      expect((await s.answer(id)).error).toEqual({ code: -32602, message });
    }
    s.send({ id: 99, method: 'textDocument/documentSymbol', params: { textDocument: doc } });
    expect(((await s.answer(99)).result as { name: string }[]).map((x) => x.name)).toEqual(['k', 'b', 'r']);
    s.send({ method: 'exit' });
    expect(await s.exited).toBe(1);
  });

  test('notifications: dropped with a line in the log; a change whose range ends before it starts no longer empties the document', async () => {
    const s = server();
    s.send({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });
    await s.answer(1);
    const doc = { uri: 'file:///y.mbk', version: 2 };
    s.send({ method: 'textDocument/didOpen', params: { textDocument: { ...doc, languageId: 'mbk', version: 1, text: `kernel k arch=sm_90a\n${HANG}` } } });
    s.send({ method: 'textDocument/didOpen', params: null });
    s.send({ method: 'textDocument/didChange', params: { textDocument: doc, contentChanges: [{ range: { start: { line: 1e9, character: 5 }, end: { line: 0, character: 0 } }, text: 'zz' }] } });
    s.send({ method: 'textDocument/didChange', params: { textDocument: doc, contentChanges: 'x' } });
    s.send({ method: 'textDocument/didSave', params: {} });
    s.send({ id: 2, method: 'textDocument/documentSymbol', params: { textDocument: doc } });
    expect(((await s.answer(2)).result as { name: string }[]).map((x) => x.name)).toEqual(['k', 'b', 'r']);
    expect(s.got.filter((m) => m.method === 'window/logMessage').map((m) => m.params!.message)).toEqual([
      'mbsim: ignored textDocument/didOpen: params must be an object',
      'mbsim: ignored textDocument/didChange: params.contentChanges[0].range ends before it starts',
      'mbsim: ignored textDocument/didChange: params.contentChanges must be an array',
      'mbsim: ignored textDocument/didSave: params.textDocument.uri must be a string',
    ]);
    s.send({ method: 'exit' });
    expect(await s.exited).toBe(1);
  });
});

describe('lsp: messages the base protocol cannot frame', () => {
  test('Content-Length 10^14, "abc", or a header without one: exit 2 with one line (it grew past 3.7 GB buffering, or went deaf without a word)', async () => {
    const cases: [string, string][] = [
      ['Content-Length: 99999999999999\r\n\r\n{', `mbsim lsp: error: message 2: Content-Length 99,999,999,999,999 is more than the ${MAX_MESSAGE_BYTES.toLocaleString('en-US')} bytes a message may have`],
      ['Content-Length: abc\r\n\r\n{}', 'mbsim lsp: error: message 2: Content-Length "abc" is not a byte count'],
      ['Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}', 'mbsim lsp: error: message 2: the header has no Content-Length'],
      ['garbage\r\n\r\n', 'mbsim lsp: error: message 2: header line "garbage" is not "Name: value"'],
      [`X-Pad: ${'a'.repeat(10_000)}`, 'mbsim lsp: error: message 2: no end of its header (an empty line) within 8,192 bytes'],
    ];
    for (const [bytes, line] of cases) {
      const s = server();
      s.send({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });
      await s.answer(1);
      s.raw(bytes);
      expect(await s.exited).toBe(2);
      expect(s.errors).toEqual([line]);
    }
  });

  test('a body that is not JSON: a ParseError answer (id null) and a line in the log, and the next message is answered (it was dropped without a word)', async () => {
    const s = server();
    s.raw('Content-Length: 5\r\n\r\n{bad}');
    s.send({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });
    expect((await s.answer(1)).result).toBeDefined();
    const parseError = s.got.find((m) => m.id === null);
    expect(parseError?.error?.code).toBe(-32700);
    expect(parseError?.error?.message).toMatch(/^message 1: its body is not JSON \(.+\); dropped$/);
    expect(s.got.filter((m) => m.method === 'window/logMessage').map((m) => m.params!.message)).toEqual([`mbsim: ignored ${parseError!.error!.message}`]);
    expect(s.errors).toEqual([]);
    s.send({ method: 'exit' });
    expect(await s.exited).toBe(1);
  });

  test('the framing holds back a body that is not JSON and stays in step', async () => {
    const fails: string[] = [];
    const dropped: string[] = [];
    const t = checkedFraming((l) => fails.push(l), (l) => dropped.push(l));
    const good = `Content-Length: 2\r\n\r\n{}`;
    const all = Buffer.from(`${good}Content-Length: 3\r\n\r\nnot${good}Content-Length: 0\r\n\r\n${good}`);
    const out: Buffer[] = [];
    t.on('data', (c: Buffer) => out.push(c));
    for (let i = 0; i < all.length; i += 5) t.write(all.subarray(i, i + 5));
    t.end();
    await new Promise((r) => t.on('end', r));
    expect(fails).toEqual([]);
    expect(dropped.map((l) => l.split(':')[0])).toEqual(['message 2', 'message 4']);
    expect(Buffer.concat(out).toString()).toBe(good.repeat(3));
  });

  test('the framing passes well-formed messages through unchanged, split anywhere, several in one chunk', async () => {
    const fails: string[] = [];
    const t = checkedFraming((l) => fails.push(l));
    const body = (n: number) => JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { n, s: 'é'.repeat(n) } });
    const msgs = [1, 0, 300].map((n) => `Content-Length: ${Buffer.byteLength(body(n))}\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${body(n)}`);
    const all = Buffer.from(msgs.join(''));
    const out: Buffer[] = [];
    t.on('data', (c: Buffer) => out.push(c));
    for (let i = 0; i < all.length; i += 7) t.write(all.subarray(i, i + 7));
    t.end();
    await new Promise((r) => t.on('end', r));
    expect(fails).toEqual([]);
    expect(Buffer.concat(out).equals(all)).toBe(true);
  });
});

describe('giant sizes in the kernel line and role headers', () => {
  test('cluster=2^53 − 1, 0 or −1: the kernel line\'s error alone (2^53 − 1 was "nested too deeply to be parsed (1 levels)" at line 2, from an array of that size)', async () => {
    for (const [c, at] of [['9007199254740991', '1:30'], ['0', '1:30'], ['-1', '1:30']] as const) {
      const r = await cli(['check', file('cl.mbk', `kernel k arch=sm_90a cluster=${c}\n${HANG}`)]);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')[0]).toBe(`${join(dir, 'cl.mbk')}:${at}: error[E-option-value]: cluster size ${c} is outside 1..16`);
      expect(r.err).not.toContain('nested too deeply');
    }
    // From a parameter set on the command line: the launch's error, exit 2.
    const f = file('clp.mbk', `param C = 1\nkernel k arch=sm_90a cluster=C\n${HANG}`);
    const r = await cli(['check', f, '--set', 'C=9007199254740991']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('error[cluster-size]: cluster size 9007199254740991 is outside 1..16');
  });

  test('warps=2^53 − 1: the thread count is "more than 9,007,199,254,740,991", not a rounded 288,230,376,151,711,700', async () => {
    const r = await cli(['check', file('warps.mbk', 'kernel k arch=sm_90a\nbarrier b[1] count=1\nrole r warps=9007199254740991 per=one:\n    mbarrier.arrive b[0]\n')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('error[E-kernel-threads]: CTA 0 has more than 9,007,199,254,740,991 threads; a CTA can have at most 1024 (32 warps); role r has more than 9,007,199,254,740,991');
    expect(r.err).not.toContain('288,230');
  });
});

describe('the parse of a large input under --max-memory', () => {
  test('PTX over 16 MiB: exit 2 saying so (it was cut at 64 MiB and reported as a syntax error at the cut, after 2.9 GB and 30 s)', async () => {
    const f = join(dir, 'huge.ptx');
    writeFileSync(f, `.version 8.0\n.target sm_90a\n.address_size 64\n${'// padding\n'.repeat((16 << 20) / 11 + 1)}`);
    for (const verb of ['check', 'info']) {
      const r = await cli([verb, f]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`mbsim: error: cannot read PTX file ${f}: it is larger than 16 MiB, the most mbsim reads (nvcc's PTX of a kernel is a few MiB; give the module of the kernel alone)`);
    }
  });

  test('a 1 MiB sketch under --max-memory 200: exit 3 before parsing, one line (the parse took the process to 340 MB)', async () => {
    const f = file('big.mbk', `kernel k arch=sm_90a\nbarrier b[1] count=1\nrole r per=one:\n${'    mbarrier.arrive b[0]\n'.repeat(40_000)}`);
    for (const verb of ['check', 'run']) {
      const r = await cli([verb, f, '--max-memory', '200']);
      expect(r.code).toBe(3);
      expect(r.out).toBe('');
      expect(r.err).toMatch(new RegExp(`^mbsim: incomplete: stopped by --max-memory 200 before parsing ${f.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: 1,000,058 characters of sketch take about 245 MB to parse, and the process holds [\\d,]+ MB; raise --max-memory MB or give a smaller file$`));
    }
  });

  test('weighParse: small inputs are not weighed; the bound counts what the process holds, and the time left', async () => {
    const { weighParse } = await import('../src/cli/parse-budget.js');
    const rss = (mb: number) => () => mb * 1048576;
    expect(() => weighParse('a.mbk', 'sketch', 60_000, { maxMemoryMb: 10 }, rss(5000))).not.toThrow(); // 15 MB: not weighed
    expect(() => weighParse('a.ptx', 'PTX', 1 << 20, { maxMemoryMb: 100 }, rss(51))).not.toThrow(); // 48 + 51 ≤ 100
    const e = thrown(() => weighParse('a.ptx', 'PTX', 1 << 20, { maxMemoryMb: 100 }, rss(53)));
    expect(e.message).toBe('mbsim: incomplete: stopped by --max-memory 100 before parsing a.ptx: 1,048,576 characters of PTX take about 48 MB to parse, and the process holds 53 MB; raise --max-memory MB or give a smaller file');
    expect((e as { exitCode?: number }).exitCode).toBe(3);
    // Time: 1,000,000 sketch characters take about 2 s; with 1.5 s of a --timeout 2 left, it stops.
    const now = () => 10_500;
    expect(() => weighParse('a.mbk', 'sketch', 1e6, { timeoutS: 3, started: 10_000 }, rss(0), now)).not.toThrow();
    const t = thrown(() => weighParse('a.mbk', 'sketch', 1e6, { timeoutS: 2, started: 10_000 }, rss(0), now));
    expect(t.message).toBe('mbsim: incomplete: stopped by --timeout 2 before parsing a.mbk: 1,000,000 characters of sketch take about 2.0 s to parse, and 1.5 s are left; raise --timeout SECONDS or give a smaller file');
    expect(() => weighParse('a.mbk', 'sketch', 100_000, { timeoutS: 0.1, started: 10_000 }, rss(0), now)).not.toThrow(); // 0.2 s: not weighed
  });

  test('check / run --timeout 1 of a 1 MiB sketch: exit 3 at once (the parse ran 3.5 s past it)', async () => {
    const f = file('slow.mbk', `kernel k arch=sm_90a\nbarrier b[1] count=1\nrole r per=one:\n${'    mbarrier.arrive b[0]\n'.repeat(40_000)}`);
    for (const verb of ['check', 'run']) {
      const t0 = Date.now();
      const r = await cli([verb, f, '--timeout', '1']);
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(r.code).toBe(3);
      expect(r.err).toMatch(/^mbsim: incomplete: stopped by --timeout 1 before parsing .*slow\.mbk: 1,000,058 characters of sketch take about 2\.0 s to parse, and [01]\.\d s are left; raise --timeout SECONDS or give a smaller file$/);
    }
  });
});

describe('the library\'s simulate is bounded in memory by default', () => {
  test('simulate(program) with no options stops by max-memory at 2 GiB, as check does (a long run recorded events until V8 aborted the process after 95 s)', async () => {
    const { vi } = await import('vitest');
    const { DEFAULT_MAX_MEMORY } = await import('../src/machine/governor.js');
    expect(DEFAULT_MAX_MEMORY).toBe(2 * 1024 ** 3);
    const p = M.instantiate(M.parseSketch('kernel k arch=sm_90a\nbarrier b[1] count=1\nrole r per=one:\n    for i in range(0, 9007199254740991):\n        mbarrier.arrive b[0]\n', 'k.mbk').kernel!);
    const spy = vi.spyOn(process.memoryUsage, 'rss').mockReturnValue(DEFAULT_MAX_MEMORY + 1);
    try {
      const r = M.simulate(p);
      expect([r.verdict, r.stoppedBy]).toEqual(['incomplete', 'max-memory']);
      // Infinity is no bound: the run goes on to its step bound.
      const free = M.simulate(p, { maxMemory: Infinity, maxSteps: 1000 });
      expect([free.verdict, free.stoppedBy]).toEqual(['incomplete', 'max-steps']);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('an output path is echoed like every other value', () => {
  test('--sarif / --trace of a 300-character name: the name cut at 64 characters with its length (the whole 4,400-character path was printed)', async () => {
    const name = `${'a'.repeat(300)}.sarif`;
    const r = await cli(['check', 'mechanism', '--sarif', name]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`mbsim: error: cannot write ${'a'.repeat(64)}… (306 characters): the name is too long (ENAMETOOLONG)`);
    const deep = `${'dir/'.repeat(1100)}x.json`;
    const t = await cli(['run', 'mechanism', '--trace', deep]);
    expect(t.code).toBe(2);
    expect(t.err).toMatch(/^mbsim: error: cannot write (dir\/){16}… \(4,406 characters\): /);
  });
});

describe('empty values', () => {
  test("info '' and serve '': '… needs a file name' (they said 'cannot read PTX file : no such file' and 'no such file: ')", async () => {
    expect(await cli(['info', ''])).toEqual({ code: 2, out: '', err: 'mbsim: error: info needs a file name' });
    expect(await cli(['serve', ' '])).toEqual({ code: 2, out: '', err: 'mbsim: error: serve needs a file name (or none, for the built-in examples)' });
  });

  test("run --phase-table '': exit 2 naming the form (it was ignored: exit 0 without a table)", async () => {
    expect(await cli(['run', 'mechanism', '--phase-table', ''])).toEqual({ code: 2, out: '', err: "mbsim: error: --phase-table expects ROLE:BARRIER:VARIABLE, got ''" });
  });
});

describe('instantiate\'s overrides', () => {
  const k = M.parseSketch('param S = 2\nkernel k arch=sm_90a\nbarrier b[S] count=1\nrole r per=one:\n    mbarrier.arrive b[0]\n', 'k.mbk').kernel!;
  test('a Map, or an object whose names are inherited: a TypeError (the override was dropped silently and the defaults ran)', () => {
    for (const [v, got] of [[new Map([['S', 4]]), 'a Map'], [Object.create({ S: 4 }), 'an object whose prototype is not Object.prototype'], [new (class P { S = 4; })(), 'an object whose prototype is not Object.prototype (an instance of P)']] as const) {
      const e = thrown(() => M.instantiate(k, v as never));
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toBe(`instantiate: overrides must be a plain object of parameter names to integers, { S: 4 } (or left out), got ${got}`);
    }
    // Plain objects, null-prototype ones and Proxies of them are read.
    for (const v of [{ S: 4 }, Object.assign(Object.create(null), { S: 4 }), new Proxy({ S: 4 }, {})]) expect(M.instantiate(k, v).barriers[0]!.length).toBe(4);
  });

  test('a value that is not a number is named by its type (the string "3" read "got 3")', () => {
    for (const [v, got] of [['3', 'a string ("3")'], [3n, 'a bigint'], [null, 'null'], [2.5, '2.5']] as const) {
      const e = thrown(() => M.instantiate(k, { S: v as never }));
      expect(e).toBeInstanceOf(M.KernelError);
      expect(e.message).toBe(`parameter S must be an integer, got ${got}`);
    }
  });
});

describe('lsp: initializationOptions out of range', () => {
  test('checkTimeoutMs 1e12: not used, said in the log (the check thread\'s kill timer overflowed to 1 ms: every check "ran past 2000000002000 ms")', async () => {
    const s = server();
    s.send({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {}, initializationOptions: { checkTimeoutMs: 1e12, checkDelayMs: -5, maxStates: 'x' } } });
    await s.answer(1);
    expect(s.got.filter((m) => m.method === 'window/logMessage').map((m) => m.params!.message)).toEqual([
      'mbsim: initializationOptions.checkDelayMs is not a positive number: not used (-5)',
      'mbsim: initializationOptions.checkTimeoutMs is more than 1,000,000,000: not used (1000000000000)',
      'mbsim: initializationOptions.maxStates is not a positive number: not used ("x")',
    ]);
    // The largest accepted timeout keeps the check thread's kill timer (2 × it + 2 s) within what a timer holds.
    const { MAX_CLIENT_MS } = await import('../src/lsp/server.js');
    expect(2 * MAX_CLIENT_MS + 2000).toBeLessThan(2 ** 31);
    s.send({ method: 'exit' });
    expect(await s.exited).toBe(1);
  });
});

describe('--sweep past its combinations', () => {
  test('the count with separators and its factors; past 2^53 "more than" (it printed 100000000 and 1e+24)', async () => {
    const r = await cli(['check', 'pipeline', '--sweep', 'K=1..10000', '--sweep', 'S=1..10000']);
    expect(r).toEqual({ code: 2, out: '', err: 'mbsim: error: --sweep: 100,000,000 combinations (10,000 × 10,000); at most 10,000' });
    const big = await cli(['check', 'pipeline', ...['K', 'S', 'TILES', 'TILE_A', 'TILE_B', 'CTAS'].flatMap((n) => ['--sweep', `${n}=1..10000`])]);
    expect(big.code).toBe(2);
    expect(big.err).toMatch(/^mbsim: error: --sweep: more than 9,007,199,254,740,991 combinations \(10,000 × .*\); at most 10,000$/);
  });
});

describe('the builder checks what it is given', () => {
  const body = (b: { arrive: (bar: string) => unknown }) => b.arrive('b');
  test('a length, count or cycles that is NaN, 2.5, a Symbol or an object: BuildError / TypeError at the call (instantiate threw "Invalid array length", "compileExpr(...) is not a function")', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => M.kernel('k').barriers('b', NaN, { count: 1 }), /^bad expression NaN: a number must be an integer within ±\(2\^53 − 1\)$/],
      [() => M.kernel('k').barrier('b', { count: 2.5 }), /^bad expression 2\.5: a number/],
      [() => M.kernel('k').barrier('b', { count: Symbol('x') as never }), /^builder: an expression must be an integer, a string such as 'S \* 2' or an Expr, got a symbol$/],
      [() => M.kernel('k').barrier('b', { count: {} as never }), /^builder: an expression must be .*, got an object of another shape$/],
      [() => M.kernel('k').barrier('b', { count: 1 }).role('r', {}, (b) => b.work(Infinity)), /^bad expression Infinity: a number/],
    ];
    for (const [f, re] of cases) {
      const e = thrown(f);
      expect(e instanceof M.BuildError || e instanceof TypeError, e.message).toBe(true);
      expect(e.message).toMatch(re);
    }
  });

  test('role names, options and the kernel\'s arch and params (a duplicate role, warps=0.5, per="bogus" and arch "sm_42" were accepted and ran)', () => {
    const k = () => M.kernel('k').barrier('b', { count: 1 });
    const cases: [() => unknown, string][] = [
      [() => k().role('r', {}, body).role('r', {}, body), "role: a role named 'r' is declared already"],
      [() => k().role('', {}, body), 'role: name "" is not a name (letters, digits and _, not starting with a digit)'],
      [() => k().role('a b', {}, body), 'role: name "a b" is not a name (letters, digits and _, not starting with a digit)'],
      [() => k().role('r', { warps: 0.5 }, body), 'role: options.warps must be a positive integer, got a number (0.5)'],
      [() => k().role('r', { threads: 0 }, body), 'role: options.threads must be a positive integer, got a number (0)'],
      [() => k().role('r', { per: 'bogus' as never }, body), "role: options.per must be 'thread', 'warp' or 'one', got a string"],
      [() => M.kernel('k', { arch: 'sm_42' as never }), "kernel: options.arch must be 'sm_90a' or 'sm_100a', got a string"],
      [() => M.kernel('k', { params: { S: NaN } }), 'kernel: options.params.S must be an integer within ±(2^53 − 1), got a number (NaN)'],
    ];
    for (const [f, msg] of cases) expect(thrown(f).message).toBe(msg);
    expect(M.instantiate(k().role('r', { warps: 2, per: 'warp' }, body).build()).agents).toHaveLength(2);
  });
});

describe('help for a command that does not exist', () => {
  test("help nope: exit 2 naming it and the commands (it printed the general help, exit 0); help check still helps", async () => {
    expect(await cli(['help', 'nope'])).toEqual({ code: 2, out: '', err: "mbsim: error: help: unknown command 'nope' (the commands: run, check, examples, decode, info, serve, lsp)" });
    const ok = await cli(['help', 'check']);
    expect(ok.code).toBe(0);
    expect(ok.out + ok.err).toContain('Usage: mbsim check [options] <kernel>');
  });
});

describe('SIGHUP during a write', () => {
  test('the terminal closes while run writes a large --trace: no temporary file, no output (a 120 MB .out.json.tmp-… stayed)', async () => {
    const { spawn } = await import('node:child_process');
    const { readdirSync, statSync } = await import('node:fs');
    const out = mkdtempSync(join(tmpdir(), 'mbsim-trial6-hup-'));
    const target = join(out, 'trace.json');
    const child = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/cli/bin.ts', 'run', 'pipeline', '--set', 'K=4000', '--trace', target, '--width', '40'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_c, sig) => done(sig)));
    let sent = false;
    for (let i = 0; i < 8000 && !sent; i++) {
      const t = readdirSync(out).find((f) => f.includes('.tmp-'));
      let size = 0;
      try {
        size = t ? statSync(join(out, t)).size : 0;
      } catch {
        size = 0;
      }
      if (size > 0) sent = child.kill('SIGHUP');
      else await new Promise((r) => setTimeout(r, 5));
    }
    expect(sent).toBe(true);
    expect(await exited).toBe('SIGHUP');
    expect(readdirSync(out)).toEqual([]);
  }, 60_000);
});
