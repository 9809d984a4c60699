import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

/**
 * Every bug sketch in examples/bugs/ against the verdicts its `# expect:` header names (from
 * the public bug patterns they transcribe). Kinds the checker reports today must be found with the named
 * barrier or buffer; kinds it does not report yet are listed in NOT_YET, and expectations it still
 * misses in KNOWN_MISSES (each must still be missed, so a fix forces an update here).
 */
const SUPPORTED = new Set(['cycle', 'lapping', 'aligned-barrier', 'missing-wait', 'scope', 'exited-cta',
  'ok', 'hang', 'race', 'tx-mismatch', 'phase-alias', 'inflight-at-exit', 'missing-fence', 'missing-init-fence', 'uninit-use',
  'count-mismatch', 'trip-mismatch', 'unused-barrier', 'unreachable-arrive', 'async-store-target',
  // tcgen05 Tensor Memory
  'tmem-unallocated', 'tmem-leak', 'tmem-alloc-after-relinquish', 'tmem-ld-unwaited', 'tmem-dealloc-inflight',
  // values, global memory, cluster launch control
  'clc-after-fail', 'clc-ctaid-failed', 'global-uninit', 'cluster-arrive-partial', 'cluster-arrive-twice',
]);
/** Verdict kinds of the headers that the checker does not produce yet. */
const NOT_YET: string[] = [];
const KNOWN_MISSES: Record<string, string> = {};
/**
 * Bug sketches whose findings (hazards and warnings, by kind and subject) are exactly the verdicts
 * their headers name: nothing missed and nothing else reported. The others also report
 * consequences of their bug that their headers do not list (a hang after a race, a second stage).
 */
const EXACT = new Set([
  'A04', 'B01', 'B06', 'B07', 'B18', 'B28', 'M01', 'M02', 'M03', 'M04', 'M05', 'M06', 'M07', 'M08', 'M09', 'M10', 'R02',
  'T02', 'T03', 'T05', 'T06', 'T07', 'T08', 'T09', 'V02', 'V05', 'V06', 'V07',
].map((n) => `${n}.mbk`));

const dir = join(__dirname, '..', 'examples', 'bugs');
const files = readdirSync(dir).filter((f) => f.endsWith('.mbk')).sort();

describe('bug sketches give their expected verdicts', () => {
  const unsupported = new Set<string>();
  for (const f of files) {
    test(f, () => {
      const src = readFileSync(join(dir, f), 'utf8');
      const parsed = parseSketch(src, f);
      expect(parsed.diagnostics).toEqual([]);
      const r = check(instantiate(parsed.kernel!), { all: true, strict: true, maxStates: 2_000_000 });
      expect(r.verdict).not.toBe('incomplete');
      // Warnings count as found (static checks, strict fences) but never make the verdict.
      const all = [...r.hazards, ...r.warnings];
      expect(r.warnings.every((w) => w.severity === 'warning')).toBe(true);
      const found = new Set(all.map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()));
      const kinds = new Set(all.map((h) => h.kind));
      const headers = src.split('\n').filter((l) => l.startsWith('# expect:'));
      // A twin that checks OK reports nothing at all, not even a --strict warning.
      if (headers.some((l) => /^# expect:\s*ok\b/.test(l))) expect([...found]).toEqual([]);
      if (EXACT.has(f)) {
        const want = headers.map((l) => {
          const [kind, ...rest] = l.slice('# expect:'.length).trim().split(/\s+/);
          const subject = rest.find((x) => x.startsWith('barrier=') || x.startsWith('buffer='))?.split('=')[1];
          return `${kind} ${subject ?? ''}`.trim();
        });
        expect([...found].sort()).toEqual([...new Set(want)].sort());
      }
      for (const line of headers) {
        const [kind, ...rest] = line.slice('# expect:'.length).trim().split(/\s+/);
        const subject = rest.find((x) => x.startsWith('barrier=') || x.startsWith('buffer='))?.split('=')[1];
        if (!SUPPORTED.has(kind!)) {
          unsupported.add(kind!);
          continue;
        }
        if (kind === 'ok') {
          expect(r.verdict).toBe('ok');
          expect(r.hazards).toEqual([]);
          continue;
        }
        const key = `${f} ${kind}${subject && !/^\d+$/.test(subject) ? ` ${subject}` : ''}`;
        // A parity wait that passes on a fresh data barrier aliases the nonexistent phase -1: the
        // checker names that `vacuous-wait` (bug-patterns.md §0.2 and §11.1 call it a vacuous match).
        const alias = (k: string) => (k === 'phase-alias' ? ['phase-alias', 'vacuous-wait'] : [k]);
        const hit = subject && !/^\d+$/.test(subject) ? alias(kind!).some((k) => found.has(`${k} ${subject}`)) : alias(kind!).some((k) => kinds.has(k));
        if (KNOWN_MISSES[key]) expect(hit, `${key} is found now: remove it from KNOWN_MISSES`).toBe(false);
        else expect(hit, `${key}: found ${[...found].join(', ') || 'nothing'}`).toBe(true);
      }
    });
  }
  test('every kind the checker reports on the bug sketches is described (SARIF rules, explorer)', async () => {
    const { HAZARD_TEXT } = await import('../src/check/kinds.js');
    const { DIAG } = await import('../src/model/diagnostics.js');
    const model = new Set<string>(Object.values(DIAG));
    const seen = new Set<string>();
    for (const f of files) {
      const parsed = parseSketch(readFileSync(join(dir, f), 'utf8'), f);
      const r = check(instantiate(parsed.kernel!), { all: true, strict: true, maxStates: 2_000_000 });
      for (const h of [...r.hazards, ...r.warnings]) seen.add(h.kind);
    }
    const undescribed = [...seen].filter((k) => !model.has(k) && !HAZARD_TEXT[k]);
    expect(undescribed).toEqual([]);
    expect(seen.size).toBeGreaterThan(12);
  });
  test('the header kinds not produced yet are exactly NOT_YET', () => {
    expect([...unsupported].sort()).toEqual(NOT_YET);
  });
});
