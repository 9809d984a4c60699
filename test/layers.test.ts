import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';

/**
 * The import direction model <- kernel <- machine <- {sim, check} <- report <- {cli, web}, checked
 * on every import of every source file. A folder may import only the folders listed for it.
 */
const ALLOWED: Record<string, string[]> = {
  model: [],
  kernel: [],
  machine: ['model', 'kernel'],
  sim: ['model', 'kernel', 'machine'],
  check: ['model', 'kernel', 'machine', 'sim', 'report'],
  report: ['model', 'kernel', 'machine', 'sim'],
  examples: ['kernel'],
  lang: ['model', 'kernel', 'machine'],
  // The PTX parser depends on libraries only; the CLI and the PTX translator import it.
  ptx: [],
  // The PTX front end's translation: PTX syntax onto the kernel IR (and the machine's errors), no semantics of its own.
  ptxi: ['kernel', 'machine', 'ptx'],
  bench: ['model', 'kernel', 'machine', 'sim', 'check', 'report', 'examples', 'lang', 'web', 'ptx', 'ptxi'],
  cli: ['model', 'kernel', 'machine', 'sim', 'check', 'report', 'examples', 'lang', 'web', 'lsp', 'ptx', 'ptxi'],
  // The language server: the sketch language, the checker and the machine, never the explorer.
  lsp: ['model', 'kernel', 'machine', 'check', 'report', 'lang'],
  // The explorer opens PTX files (`mbsim serve FILE.ptx`) through the front end's translation.
  web: ['model', 'kernel', 'machine', 'sim', 'check', 'report', 'examples', 'lang', 'ptx', 'ptxi'],
  // The library's entry point (src/index.ts) re-exports the public API of the core layers and both front ends.
  'index.ts': ['model', 'kernel', 'machine', 'sim', 'check', 'report', 'examples', 'lang', 'ptx', 'ptxi'],
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : /\.tsx?$/.test(n) ? [p] : [];
  });
}

test('every import follows the layer direction', () => {
  const src = join(__dirname, '..', 'src');
  const bad: string[] = [];
  let checked = 0;
  for (const f of files(src)) {
    const layer = relative(src, f).split(/[\\/]/)[0]!;
    expect(Object.keys(ALLOWED), `unknown layer folder src/${layer}`).toContain(layer);
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = relative(src, join(f, '..', m[1]!)).split(/[\\/]/)[0]!;
      checked++;
      if (target !== layer && !ALLOWED[layer]!.includes(target)) bad.push(`${relative(src, f)} imports ${m[1]} (layer ${target})`);
    }
  }
  expect(checked).toBeGreaterThan(20);
  expect(bad).toEqual([]);
});
