#!/usr/bin/env node
/**
 * Keeps `prepare` out of the packed package.json (`npm pack`, `npm publish`), as pinst does for
 * `postinstall`. `prepare` builds dist/ and dist-web/ for a checkout (`npm ci`) and for a git
 * dependency (npm runs it there before packing); the tarball already holds them. npm never runs a
 * tarball's `prepare` on install (only a linked folder's or a git dependency's), but npm 11.16 and
 * later list it anyway among the "install scripts not yet covered by allowScripts" of every
 * non-registry install (`npm install ./mbsim-0.1.0.tgz`), and npm 12 blocks what that list names.
 *
 * `node scripts/pack-manifest.mjs disable` (package.json's `prepack`, after the build) renames the
 * script to `_prepare`; `enable` (its `postpack`) renames it back. Only the key is renamed, in the
 * file's own text, so the file is otherwise byte for byte the same. A pack that failed between the
 * two leaves `_prepare` behind: `enable` (or the next pack) puts it back.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json');
const mode = process.argv[2];
if (mode !== 'disable' && mode !== 'enable') {
  process.stderr.write('usage: node scripts/pack-manifest.mjs disable|enable\n');
  process.exit(2);
}
const [from, to] = mode === 'disable' ? ['"prepare":', '"_prepare":'] : ['"_prepare":', '"prepare":'];
const text = readFileSync(file, 'utf8');
const at = text.indexOf(`    ${from}`);
if (at >= 0) {
  const next = `${text.slice(0, at)}    ${to}${text.slice(at + 4 + from.length)}`;
  const scripts = JSON.parse(next).scripts;
  if (!scripts || !(to.slice(1, -2) in scripts)) throw new Error(`pack-manifest: renaming ${from} in ${file} went wrong`);
  writeFileSync(file, next);
}
