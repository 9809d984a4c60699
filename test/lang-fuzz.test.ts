/**
 * Fuzz test of the sketch front end: at least 10,000 inputs (random edits of the example sketches
 * and random bytes) through parseSketch, which must never throw and must return well-formed
 * diagnostics; formatDiagnostic must not throw either.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { formatDiagnostic, parseSketch } from '../src/lang/index.js';

const root = join(import.meta.dirname, '..', 'examples');
const files = [
  ...readdirSync(root).filter((f) => f.endsWith('.mbk')).map((f) => join(root, f)),
  ...readdirSync(join(root, 'bugs')).filter((f) => f.endsWith('.mbk')).map((f) => join(root, 'bugs', f)),
];
const corpus = files.map((f) => readFileSync(f, 'utf8'));

/** Fragments that exercise the grammar when spliced in. */
const FRAGMENTS = [
  ':', '\n', '\n    ', '\t', '    ', '(', ')', '[', ']', ',', '=', '@', '#', '"', 'for', 'if', 'else:', 'elif', 'elect:',
  'role', 'kernel', 'param', 'barrier', 'smem', 'tmem', 'range(', 'mbarrier.arrive', 'mbarrier.try_wait', 'x =',
  'per=one', 'shape=1x2x3', 'multicast=', '0x', '99999999999999999999', '-', '!', '~', '<<', '&&', 'and', 'not', '\r\n', '\r',
  'pass', 'exit', 'work', '@(1 - cta)', 'count=0', 'manual', 'cta=', 'instances=', 'where=', '[0]', '[S]', '\u00e9', '\0',
];

type Edit = { kind: number; pos: number; len: number; frag: number; ch: number };

function applyEdits(src: string, edits: Edit[]): string {
  let s = src;
  for (const e of edits) {
    const pos = s.length ? e.pos % (s.length + 1) : 0;
    switch (e.kind) {
      case 0: s = s.slice(0, pos) + s.slice(pos + e.len); break; // delete
      case 1: s = s.slice(0, pos) + FRAGMENTS[e.frag % FRAGMENTS.length] + s.slice(pos); break; // insert
      case 2: s = s.slice(0, pos) + String.fromCharCode(e.ch) + s.slice(pos + 1); break; // replace a char
      case 3: { // duplicate a line range
        const chunk = s.slice(pos, pos + e.len * 8);
        s = s.slice(0, pos) + chunk + s.slice(pos);
        break;
      }
      case 4: { // swap two lines
        const lines = s.split('\n');
        const a = e.pos % lines.length, b = (e.pos + e.len) % lines.length;
        [lines[a], lines[b]] = [lines[b]!, lines[a]!];
        s = lines.join('\n');
        break;
      }
      default: { // re-indent a line
        const lines = s.split('\n');
        const a = e.pos % lines.length;
        lines[a] = ' '.repeat(e.len % 13) + lines[a]!.trimStart();
        s = lines.join('\n');
      }
    }
  }
  return s;
}

const edit = fc.record({
  kind: fc.nat(5), pos: fc.nat(100_000), len: fc.nat(12), frag: fc.nat(FRAGMENTS.length - 1), ch: fc.nat(0x7f),
});

function check(src: string): void {
  let r: ReturnType<typeof parseSketch>;
  try {
    r = parseSketch(src, 'fuzz.mbk');
  } catch (err) {
    throw new Error(`parseSketch threw on ${JSON.stringify(src)}: ${(err as Error).stack}`);
  }
  if (r.kernel) expect(r.diagnostics).toEqual([]);
  else expect(r.diagnostics.length).toBeGreaterThan(0);
  for (const d of r.diagnostics) {
    if (d.code === 'E-internal') throw new Error(`internal error on ${JSON.stringify(src)}: ${d.message}`);
    expect(d.line).toBeGreaterThanOrEqual(1);
    expect(d.col).toBeGreaterThanOrEqual(1);
    expect(d.endCol).toBeGreaterThan(d.col);
    expect(formatDiagnostic(d, src)).toContain(`error[${d.code}]`);
  }
}

test('mutated example sketches never make the parser throw (8,000 runs)', () => {
  fc.assert(
    fc.property(fc.nat(corpus.length - 1), fc.array(edit, { minLength: 1, maxLength: 6 }), (i, edits) => {
      check(applyEdits(corpus[i]!, edits));
    }),
    { numRuns: 8000, seed: 20261130 },
  );
}, 300_000);

test('random bytes and token soup never make the parser throw (3,000 runs)', () => {
  const soup = fc.array(fc.constantFrom(...FRAGMENTS, 'full[s]', 'A[s]', ' ', ' ', '1', 'i', 'S'), { maxLength: 60 }).map((a) => a.join(''));
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), soup), (s) => check(s)),
    { numRuns: 3000, seed: 7 },
  );
});
