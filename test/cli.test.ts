import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { H200 } from '../src/sim/timing.js';

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('mbsim run', () => {
  test('--json gives the verdict, ledger, stats, spans and events', async () => {
    const r = await run(['run', 'mechanism', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.schema).toBe('mbsim.run/1');
    expect(j.verdict).toBe('ok');
    expect(j.params).toEqual({ BYTES: 2048 });
    expect(j.ledger.phases[0]).toMatchObject({ barrier: 'bar[0]', phase: 0, txExpected: 4096, txCompleted: 4096 });
    expect(j.events.length).toBe(j.eventCount);
    expect(j.spans.length).toBeGreaterThan(3);
  });

  test('--trace writes Chrome trace-event JSON with async copy spans and flow arrows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-'));
    const f = join(dir, 't.json');
    const r = await run(['run', 'pipeline', '--set', 'K=4', '--set', 'TILES=1', '--trace', f]);
    expect(r.code).toBe(0);
    const t = JSON.parse(readFileSync(f, 'utf8'));
    const ph = (p: string) => t.traceEvents.filter((e: { ph: string }) => e.ph === p);
    expect(ph('b').length).toBe(8); // 4 iterations × 2 TMA copies
    expect(ph('e').length).toBe(8);
    expect(ph('s').length).toBe(ph('f').length);
    expect(ph('s').length).toBeGreaterThan(8);
    expect(ph('X').some((e: { name: string }) => e.name.startsWith('phase '))).toBe(true);
    expect(ph('C').length).toBeGreaterThan(0);
    expect(ph('M').some((e: { args: { name: string } }) => e.args.name === 'producer')).toBe(true);
  });

  test('--trace to an unwritable place: exit 2, no file left', async () => {
    const r = await run(['run', 'mechanism', '--trace', '/nonexistent-dir/x.json']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mbsim: error: cannot write /nonexistent-dir/x.json: no such directory (ENOENT)');
  });

  test('--timing overrides a parameter; unknown names and bad JSON are exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ tmaLatency: 1000 }));
    const base = JSON.parse((await run(['run', 'mechanism', '--json'])).out);
    const slow = JSON.parse((await run(['run', 'mechanism', '--json', '--timing', good])).out);
    expect(slow.cycles - base.cycles).toBe(1000 - H200.tmaLatency.value);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ tmaLatncy: 1 }));
    const r = await run(['run', 'mechanism', '--timing', bad]);
    expect(r.code).toBe(2);
    // Located at the key, with a caret, as every other input error.
    expect(r.err).toBe(`${bad}:1:2: error[E-timing-unknown]: unknown timing parameter 'tmaLatncy' (did you mean tmaLatency?)\n  {"tmaLatncy":1}\n   ^~~~~~~~~~~`);
    writeFileSync(bad, '{');
    expect((await run(['run', 'mechanism', '--timing', bad])).code).toBe(2);
    expect(existsSync(good)).toBe(true);
  });

  test('--seed is reproducible', async () => {
    const a = JSON.parse((await run(['run', 'pipeline', '--json', '--seed', '7'])).out);
    const b = JSON.parse((await run(['run', 'pipeline', '--json', '--seed', '7'])).out);
    expect(a.cycles).toBe(b.cycles);
  });

  test('--help on every verb exits 0', async () => {
    for (const v of [['--help'], ['run', '--help'], ['examples', '--help']]) {
      const r = await run(v);
      expect(r.code).toBe(0);
      expect(r.out).toContain('Usage: mbsim');
    }
  });
});
