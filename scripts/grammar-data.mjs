#!/usr/bin/env node
/**
 * Writes src/lang/grammar-data.ts: the sketch grammar's GAST and follow sets as Chevrotain records
 * and computes them (src/lang/grammar-cache.ts), from tsc's dist/lang/. Run after `npm run build`
 * whenever the grammar in src/lang/parser.ts changes (test/lang-start.test.ts says when).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { SketchParser } = await import(`${root}dist/lang/parser.js`);
const { freezeGrammar } = await import(`${root}dist/lang/grammar-cache.js`);
const parser = new SketchParser(true);
const frozen = freezeGrammar(parser.gastProductionsCache, parser.resyncFollows);
const text = JSON.stringify(frozen).replace(/\\/g, '\\\\').replace(/'/g, "\\'");
writeFileSync(`${root}src/lang/grammar-data.ts`, `/**
 * The sketch grammar's GAST and follow sets as Chevrotain records and computes them, frozen
 * (grammar-cache.ts). Written by \`node scripts/grammar-data.mjs\` after \`npm run build\`; do not edit.
 */
import type { FrozenGrammar } from './grammar-cache.js';

/** The frozen grammar of parser.ts's SketchParser (JSON.parse: faster to load than a literal this size). */
export const GRAMMAR: FrozenGrammar = JSON.parse('${text}');
`);
console.log(`src/lang/grammar-data.ts: ${Object.keys(frozen.rules).length} rules, ${Object.keys(frozen.follows).length} follow sets, ${text.length} characters`);
