/**
 * Shrinks a divergent kernel of the soak (a `kernel:` line of `npm run fuzz`, as IR JSON) to a
 * small one that still diverges, for a regression fixture in test/fixtures/differential/.
 *
 *   node --import ./test/support/ts-register.mjs test/support/shrink.ts IN.json [OUT.json]
 *
 * Greedy, to a fixpoint: drop a role, drop a statement, replace a block by its body, lower a
 * role's warps / instances, drop a `where`; a candidate is kept when {@link compare} still reports
 * a divergence of the same hazard kinds. Prints the divergence and the shrunk kernel.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Kernel, Stmt } from '../../src/kernel/ir.js';
import { compare } from './differential.js';

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

/** The divergence's signature: configs with the hazard kinds they miss or add, and whether finals differ. */
function signature(k: Kernel): string | null {
  let r: ReturnType<typeof compare>;
  try {
    r = compare(k, 200_000);
  } catch {
    return null;
  }
  if (!r || !r.divergences.length) return null;
  const kinds = (l: string[]) => [...new Set(l.map((h) => h.split('|')[0]))].sort().join(',');
  return r.divergences.map((d) => `${kinds(d.missing)}/${kinds(d.extra)}/${d.finalsMissing > 0}/${d.finalsExtra > 0}`).sort().join(';');
}

/** Every one-step simplification of a statement list (drops, unwraps, inner simplifications). */
function* shrinkBody(body: Stmt[]): Generator<Stmt[]> {
  for (let i = 0; i < body.length; i++) {
    yield [...body.slice(0, i), ...body.slice(i + 1)];
    const s = body[i]!;
    const inner = s.s === 'for' || s.s === 'elect' ? [s.body] : s.s === 'if' ? [s.then, ...(s.else ? [s.else] : [])] : [];
    for (const b of inner) yield [...body.slice(0, i), ...b, ...body.slice(i + 1)];
    if (s.s === 'for' || s.s === 'elect') for (const b of shrinkBody(s.body)) yield [...body.slice(0, i), { ...s, body: b }, ...body.slice(i + 1)];
    if (s.s === 'if') {
      for (const b of shrinkBody(s.then)) yield [...body.slice(0, i), { ...s, then: b }, ...body.slice(i + 1)];
      if (s.else) {
        yield [...body.slice(0, i), { ...s, else: undefined } as Stmt, ...body.slice(i + 1)];
        for (const b of shrinkBody(s.else)) yield [...body.slice(0, i), { ...s, else: b }, ...body.slice(i + 1)];
      }
    }
  }
}

/** Every one-step simplification of a kernel. */
function* candidates(k: Kernel): Generator<Kernel> {
  for (let r = 0; r < k.roles.length; r++) {
    if (k.roles.length > 1) yield { ...k, roles: k.roles.filter((_, i) => i !== r) };
    const role = k.roles[r]!;
    const put = (nr: typeof role): Kernel => ({ ...k, roles: k.roles.map((x, i) => (i === r ? nr : x)) });
    if (role.where) yield put({ ...role, where: undefined });
    if (role.instances) yield put({ ...role, instances: undefined });
    const w = role.warps ?? 1;
    if (w > 1) yield put({ ...role, warps: w - 1 });
    for (const b of shrinkBody(role.body)) yield put({ ...role, body: b });
  }
}

const [inPath, outPath] = process.argv.slice(2);
if (!inPath) {
  process.stderr.write('usage: shrink.ts IN.json [OUT.json]\n');
  process.exit(2);
}
let k = JSON.parse(readFileSync(inPath, 'utf8')) as Kernel;
const sig = signature(k);
if (!sig) {
  process.stderr.write('shrink: the kernel does not diverge\n');
  process.exit(1);
}
console.log(`divergence: ${sig}`);
for (let progress = true; progress;) {
  progress = false;
  for (const c of candidates(k)) {
    if (signature(c) === sig) {
      k = clone(c);
      progress = true;
      break;
    }
  }
}
const text = JSON.stringify(k);
if (outPath) writeFileSync(outPath, `${text}\n`);
console.log(text);
