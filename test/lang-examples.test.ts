import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { EXAMPLES } from '../src/examples/index.js';
import { formatDiagnostic, parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';

const root = join(import.meta.dirname, '..', 'examples');

/** Deep copy without source locations (`loc`) and the fields only a front end sets. */
function stripLocs(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(stripLocs);
  if (x && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) if (k !== 'loc' && k !== 'file' && !k.endsWith('Loc')) out[k] = stripLocs(v);
    return out;
  }
  return x;
}

function load(path: string) {
  const src = readFileSync(path, 'utf8');
  const r = parseSketch(src, path);
  if (!r.kernel) throw new Error(r.diagnostics.map((d) => formatDiagnostic(d, src)).join('\n'));
  return r.kernel;
}

describe('built-in examples as sketches', () => {
  for (const ex of EXAMPLES) {
    test(`${ex.name}.mbk = builder ${ex.name}`, () => {
      const sketch = load(join(root, `${ex.name}.mbk`));
      const built = ex.build();
      // Same IR apart from source locations.
      expect(stripLocs(sketch)).toEqual(stripLocs(built));
      const a = simulate(instantiate(sketch));
      const b = simulate(instantiate(built));
      expect(a.verdict).toBe(b.verdict);
      expect(a.cycles).toBe(b.cycles);
      expect(a.steps).toBe(b.steps);
      expect(a.eventCount).toBe(b.eventCount);
      expect(stripLocs(a.events)).toEqual(stripLocs(b.events));
      expect(a.diagnostics.map((d) => d.diag.code)).toEqual(b.diagnostics.map((d) => d.diag.code));
      // Every statement of the sketch carries a location in the sketch file.
      for (const e of a.events ?? []) if (e.e === 'op') expect(e.loc.file).toBe(join(root, `${ex.name}.mbk`));
    });
  }

  test('with overridden parameters too', () => {
    for (const [name, set] of [['pipeline', { S: 2, K: 5 }], ['hopper', { CONSUMERS: 1 }], ['cluster', { S: 3, K: 7 }]] as const) {
      const sketch = load(join(root, `${name}.mbk`));
      const built = EXAMPLES.find((e) => e.name === name)!.build();
      const a = simulate(instantiate(sketch, set));
      const b = simulate(instantiate(built, set));
      expect([a.verdict, a.cycles, a.eventCount]).toEqual([b.verdict, b.cycles, b.eventCount]);
    }
  });
});

/** `# expect: KIND key=value ...` lines of a bug sketch. */
export function expectations(src: string): { kind: string; attrs: Record<string, string> }[] {
  const out: { kind: string; attrs: Record<string, string> }[] = [];
  for (const m of src.matchAll(/^#\s*expect:\s*(\S+)(.*)$/gm)) {
    const attrs: Record<string, string> = {};
    for (const kv of m[2]!.trim().split(/\s+/).filter(Boolean)) {
      const i = kv.indexOf('=');
      if (i > 0) attrs[kv.slice(0, i)] = kv.slice(i + 1);
      else attrs[kv] = 'true';
    }
    out.push({ kind: m[1]!, attrs });
  }
  return out;
}

const KINDS = new Set([
  'ok', 'hang', 'race', 'phase-alias', 'tx-mismatch', 'over-arrival', 'missing-fence', 'missing-init-fence',
  'inflight-at-exit', 'count-mismatch', 'uninit-use', 'cycle', 'unreachable-arrive', 'trip-mismatch', 'missing-wait',
  'scope', 'lapping', 'unused-barrier', 'exited-cta', 'async-store-target',
  'aligned-barrier',
  'tmem-unallocated', 'tmem-leak', 'tmem-alloc-after-relinquish', 'tmem-ld-unwaited', 'tmem-dealloc-inflight', 'tmem-alloc-state',
  'clc-after-fail', 'clc-ctaid-failed', 'global-uninit', 'cluster-arrive-partial', 'cluster-arrive-twice',
]);

describe('bug-pattern sketches', () => {
  const dir = join(root, 'bugs');
  const files = readdirSync(dir).filter((f) => f.endsWith('.mbk')).sort();
  test('the memory-model sketches are present, each with its fixed twin', () => {
    expect(files.filter((f) => /^M\d/.test(f)).map((f) => f.replace('.mbk', ''))).toEqual(
      ['M01', 'M02', 'M03', 'M04', 'M05', 'M06', 'M07', 'M08', 'M09', 'M10'].flatMap((m) => [`${m}-fixed`, m]),
    );
  });
  test('all 19 patterns are present, and the asynchronous-copy patterns with their fixed twins', () => {
    const names = files.map((f) => f.replace('.mbk', ''));
    expect(names.filter((n) => /^[BN]\d+$/.test(n))).toEqual([
      'B01', 'B02', 'B03', 'B04', 'B06', 'B07', 'B09', 'B10', 'B12', 'B13', 'B15', 'B16', 'B18', 'B20', 'B22', 'B24', 'B26',
      'B28', 'N01',
    ]);
    expect(names.filter((n) => n.startsWith('R'))).toEqual(['R01-fixed', 'R01', 'R02-fixed', 'R02']);
    const async = ['A01', 'A02', 'A03', 'A04', 'A05', 'A06'];
    expect(names.filter((n) => n.startsWith('A'))).toEqual(async.flatMap((n) => [`${n}-fixed`, n]));
    const values = ['V01', 'V02', 'V03', 'V04', 'V05', 'V06', 'V07'];
    expect(names.filter((n) => n.startsWith('V'))).toEqual(values.flatMap((n) => [`${n}-fixed`, n]));
    const tcgen05 = ['T01', 'T02', 'T03', 'T04', 'T05', 'T06', 'T07', 'T08', 'T09'];
    expect(names.filter((n) => n.startsWith('T'))).toEqual(tcgen05.flatMap((n) => [`${n}-fixed`, n]));
  });
  test('each operation family of the machine has a bug sketch that uses it (and its fixed twin)', () => {
    // The operations of docs/LANGUAGE.md §7 that a bug sketch, and its twin, are written around.
    const uses: [string, RegExp][] = [
      ['T07', /^\s+tcgen05\.cp /m], ['T08', /^\s+tcgen05\.st [\s\S]*tcgen05\.wait::st/m], ['T09', /^\s+tcgen05\.shift /m],
      ['V06', /^\s+red\.[a-z.]*global\.add /m], ['V07', /^\s+clusterlaunchcontrol\.try_cancel\.multicast::cluster::all /m],
      ['R02', /^smem \w+ .*\bcta=0\b/m],
    ];
    for (const [name, re] of uses) {
      for (const f of [`${name}.mbk`, `${name}-fixed.mbk`]) expect(readFileSync(join(dir, f), 'utf8'), f).toMatch(re);
    }
  });
  for (const f of files) {
    test(`${f} parses, has a machine-readable verdict and simulates`, () => {
      const src = readFileSync(join(dir, f), 'utf8');
      const exp = expectations(src);
      expect(exp.length).toBeGreaterThan(0);
      for (const e of exp) expect(KINDS.has(e.kind), `unknown expect kind ${e.kind}`).toBe(true);
      const k = load(join(dir, f));
      const r = simulate(instantiate(k), { maxSteps: 1_000_000 });
      expect(['ok', 'hang', 'trap', 'error']).toContain(r.verdict);
      // A sketch expecting a plain hang must hang in the timed simulation as well.
      if (exp.some((e) => e.kind === 'hang' && e.attrs.reachable === undefined)) expect(r.verdict).toBe('hang');
      if (exp.length === 1 && exp[0]!.kind === 'ok') expect(r.verdict).toBe('ok');
    });
  }
});
