/**
 * Node module hooks that run the TypeScript sources directly (tests only): `./x.js` imported from
 * a `.ts` file resolves to `./x.ts` when that exists, and `.ts` files are transpiled with
 * TypeScript's `transpileModule`. Used by the parallel checker's worker threads when the checker
 * itself runs from src/ (vitest), where no compiled dist/ can be assumed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export async function resolve(spec, ctx, next) {
  if (ctx.parentURL && ctx.parentURL.endsWith('.ts') && spec.endsWith('.js') && (spec.startsWith('./') || spec.startsWith('../'))) {
    const u = new URL(spec.slice(0, -3) + '.ts', ctx.parentURL);
    if (existsSync(fileURLToPath(u))) return { url: u.href, format: 'module', shortCircuit: true };
  }
  return next(spec, ctx);
}

export async function load(url, ctx, next) {
  if (url.startsWith('file:') && url.endsWith('.ts')) {
    const file = fileURLToPath(url);
    const out = ts.transpileModule(readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false, inlineSourceMap: true, inlineSources: true },
    });
    return { format: 'module', source: out.outputText, shortCircuit: true };
  }
  return next(url, ctx);
}
