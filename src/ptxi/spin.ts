/**
 * Recognition of `mbarrier.try_wait` spin loops, which the translation turns into the machine's
 * blocking wait (one step instead of a state per failed test). The two shapes nvcc emits:
 *
 * - CCCL's `while (!mbarrier_try_wait_parity(bar, ph));`:
 *   `L: { .reg .pred P; mbarrier.try_wait.parity P, [a], ph; selp.b32 r, 1, 0, P; }
 *   setp.eq.s32 p, r, 0; @p bra L;`
 * - the same with effect-free instructions between the label and the test (nvcc rematerializing
 *   the barrier's address: `L: mov.u32 %r57, empty; { try_wait.parity … }`);
 * - CUTLASS's inline asm: `{ .reg .pred P; L: mbarrier.try_wait.parity P, [a], ph; @!P bra L; }`,
 *   or with the exit first: `L: mbarrier.try_wait.parity P, [a], ph; @P bra DONE; bra L; DONE:`.
 *
 * In both, the loop is left exactly when the test succeeds: a blocking wait followed by the test's
 * result being true is the same behaviour with no failed tests to explore. The loop may jump back
 * to a label before the test through a backoff with no effect (libcu++'s `cuda::barrier::wait`:
 * a retry counter, `%globaltimer`, `nanosleep`, branches that stay inside it): after the blocking
 * wait the back edge is never taken, and the backoff, run only on entry, changes nothing. The
 * backoff may also sit after the test (an optimized libcu++ `wait_parity`: `@fail bra B; bra.uni
 * DONE; B: setp.lt retries, 16; @p bra R; mov %globaltimer; …; nanosleep; bra.uni L; R: …`):
 * {@link retries}.
 */
import type { Operand } from '../ptx/ast.js';
import { destsOf, regsOf, sourcesOf } from './analysis.js';
import { branchTarget, type Flat, type FlatIns } from './flat.js';

const nameOf = (it: FlatIns, o: Operand | undefined): string | undefined => (o && o.kind === 'name' ? it.name(o.name) : undefined);

/** Whether flat item `i` is the `try_wait` test of one of the spin loops above. */
export function isSpinTest(flat: Flat, i: number): boolean {
  const it = flat.items[i];
  if (!it || 'label' in it || it.ins.base !== 'mbarrier' || !['try_wait', 'test_wait'].includes(it.ins.mods[0] ?? '') || it.ins.guard) return false;
  return nvccSpin(flat, i, it) || debugSpin(flat, i, it);
}

/** The shapes of the module comment, as an optimized build writes them. */
function nvccSpin(flat: Flat, i: number, it: FlatIns): boolean {
  const labels = new Set<string>();
  // The loop's label, possibly before effect-free instructions that recompute the test's operands (`mov.u32 %r57, empty;`).
  for (let j = i - 1; j >= 0; j--) {
    const x = flat.items[j]!;
    if ('label' in x) labels.add(x.label);
    else if (!BACKOFF.has(x.ins.base) || x.ins.base === 'bra' || x.ins.guard) break;
  }
  if (!labels.size) return false;
  const P = nameOf(it, it.ins.operands[0]);
  const ins = (k: number): FlatIns | undefined => { const x = flat.items[i + k]; return x && !('label' in x) ? x : undefined; };
  const loops = (b: FlatIns | undefined, pred: string | undefined, negated: boolean) =>
    !!b && !!pred && b.ins.base === 'bra' && !!b.ins.guard && b.ins.guard.negated === negated && b.name(b.ins.guard.pred) === pred && (labels.has(branchTarget(b) ?? '') || backoff(flat, branchTarget(b), i) || retries(flat, branchTarget(b), labels, i));
  if (loops(ins(1), P, true)) return true;
  // `L: try_wait P; @P bra DONE; bra L;`
  const out = ins(1);
  const back = ins(2);
  if (out && back && out.ins.base === 'bra' && out.ins.guard && !out.ins.guard.negated && out.name(out.ins.guard.pred) === P && back.ins.base === 'bra' && !back.ins.guard && labels.has(branchTarget(back) ?? '')) return true;
  const selp = ins(1);
  const setp = ins(2);
  if (!selp || !setp || selp.ins.base !== 'selp' || setp.ins.base !== 'setp') return false;
  const ops = selp.ins.operands;
  const one = (o: Operand | undefined, v: number) => o?.kind === 'int' && Number(o.value) === v;
  if (!one(ops[1], 1) || !one(ops[2], 0) || nameOf(selp, ops[3]) !== P) return false;
  const r = nameOf(selp, ops[0]);
  const s = setp.ins.operands;
  if (setp.ins.mods[0] !== 'eq' || nameOf(setp, s[1]) !== r || !one(s[2], 0)) return false;
  return loops(ins(3), nameOf(setp, s[0]), false);
}

/**
 * The spin loop of a `-G` build (no optimization, calls inlined, arguments through local memory,
 * local.ts): `L: …; { try_wait.parity P, [a], ph; selp r, 1, 0, P; } setp.ne p1, r, 0; selp r4,
 * 1, 0, p1; (the callee's return value moves) cvt; setp.ne p23, rs5, 0; not.pred; not.pred; @p25
 * bra DONE; bra L2; L2: bra L;`. From label L to the test only moves and integer arithmetic run
 * (unconditional branches forward included); after the test, the test's predicate is followed
 * through `selp`, `setp.eq/ne … 0`, `cvt`, `mov` and `not` to the first conditional branch on it,
 * and the side where the test failed must come back to L through effect-free code only: then a
 * failed test changes nothing, and the loop is the blocking wait.
 */
function debugSpin(flat: Flat, i: number, it: FlatIns): boolean {
  const items = flat.items;
  const labels = new Set<string>();
  const ahead = new Set<string>();
  for (let j = i - 1; j >= 0 && i - j < 400; j--) {
    const x = items[j]!;
    if ('label' in x) { labels.add(x.label); ahead.add(x.label); continue; }
    if (x.ins.guard || !(BACKOFF.has(x.ins.base) || x.ins.base === 'cvta')) break;
    if (x.ins.base === 'bra' && !ahead.has(branchTarget(x) ?? '')) break;
  }
  if (!labels.size) return false;
  const at = (label: string | undefined) => items.findIndex((x) => 'label' in x && x.label === label);
  // Whether the code from item k comes back to a loop label with no effect.
  const returns = (k: number): boolean => {
    for (let n = 0; k >= 0 && k < items.length && n < 400; n++) {
      const x = items[k]!;
      if ('label' in x) { if (labels.has(x.label)) return true; k++; continue; }
      if (x.ins.guard || !(BACKOFF.has(x.ins.base) || x.ins.base === 'cvta')) return false;
      k = x.ins.base === 'bra' ? at(branchTarget(x)) : k + 1;
    }
    return false;
  };
  const P = nameOf(it, it.ins.operands[0]);
  if (!P) return false;
  // Registers known to equal the test's result (true) or its negation (false).
  const rel = new Map<string, boolean>([[P, true]]);
  const int = (o: Operand | undefined, v: number) => o?.kind === 'int' && Number(o.value) === v;
  for (let k = i + 1, n = 0; k >= 0 && k < items.length && n < 400; n++) {
    const x = items[k]!;
    if ('label' in x) { k++; continue; }
    const ops = x.ins.operands;
    const src = (o: Operand | undefined) => { const r = nameOf(x, o); return r === undefined ? undefined : rel.get(r); };
    const d = nameOf(x, ops[0]);
    if (x.ins.base === 'bra') {
      if (!x.ins.guard) { k = at(branchTarget(x)); continue; }
      const q = rel.get(x.name(x.ins.guard.pred));
      if (q === undefined) return false;
      // taken when the test failed: the target loops back; else the fall-through does
      const takenOnFail = q === x.ins.guard.negated;
      return takenOnFail ? returns(at(branchTarget(x))) && !returns(k + 1) : returns(k + 1) && !returns(at(branchTarget(x)));
    }
    if (x.ins.guard || !(BACKOFF.has(x.ins.base) || x.ins.base === 'cvta')) return false;
    let r: boolean | undefined;
    if (x.ins.base === 'selp' && src(ops[3]) !== undefined && ((int(ops[1], 1) && int(ops[2], 0)) || (int(ops[1], 0) && int(ops[2], 1)))) r = src(ops[3]) === int(ops[1], 1);
    else if (x.ins.base === 'setp' && ops.length === 3 && int(ops[2], 0) && src(ops[1]) !== undefined && (x.ins.mods[0] === 'ne' || x.ins.mods[0] === 'eq')) r = src(ops[1]) === (x.ins.mods[0] === 'ne');
    else if ((x.ins.base === 'mov' || x.ins.base === 'cvt') && src(ops[1]) !== undefined) r = src(ops[1]);
    else if (x.ins.base === 'not' && x.ins.mods.includes('pred') && src(ops[1]) !== undefined) r = !src(ops[1]);
    if (d !== undefined) { if (r === undefined) rel.delete(d); else rel.set(d, r); }
    k++;
  }
  return false;
}

/** Opcodes a backoff may hold: integer and clock arithmetic, branches, sleeping. */
const BACKOFF = new Set(['mov', 'add', 'sub', 'mul', 'shl', 'shr', 'and', 'or', 'xor', 'not', 'cvt', 'setp', 'selp', 'min', 'max', 'bra', 'nanosleep']);

/** Whether the items from label `to` up to test `i` are a backoff: effect-free, their branches staying in `[to, i]`. */
function backoff(flat: Flat, to: string | undefined, i: number): boolean {
  if (to === undefined) return false;
  const j = flat.items.findIndex((x) => 'label' in x && x.label === to);
  if (j < 0 || j >= i) return false;
  const inside = new Set<string>();
  for (let k = j; k <= i; k++) { const x = flat.items[k]!; if ('label' in x) inside.add(x.label); }
  for (let k = j; k < i; k++) {
    const x = flat.items[k]!;
    if ('label' in x) continue;
    if (!BACKOFF.has(x.ins.base)) return false;
    if (x.ins.base === 'bra' && !inside.has(branchTarget(x) ?? '')) return false;
  }
  return true;
}

/**
 * Whether the code from label `to` (after the test `i`) is a backoff that only retries: every path
 * from it, both sides of each branch whatever its predicate (a clock, a retry counter), runs
 * effect-free instructions only and comes back to one of the loop's `labels` (before the test);
 * and no register it writes is read outside it and the loop's own code from `labels` to the test.
 * Then the failed test's side never changes what the kernel does after the loop, and the blocking
 * wait is exact. Up to 400 items are followed.
 */
function retries(flat: Flat, to: string | undefined, labels: ReadonlySet<string>, i: number): boolean {
  const items = flat.items;
  const at = (label: string | undefined) => (label === undefined ? -1 : items.findIndex((x) => 'label' in x && x.label === label));
  const start = at(to);
  if (start <= i) return false;
  const region = new Set<number>();
  const stack = [start];
  while (stack.length) {
    const k = stack.pop()!;
    if (k < 0 || k >= items.length) return false;
    const x = items[k]!;
    if ('label' in x && labels.has(x.label)) continue;
    if (region.has(k)) continue;
    region.add(k);
    if (region.size > 400) return false;
    if ('label' in x) { stack.push(k + 1); continue; }
    if (!BACKOFF.has(x.ins.base) && x.ins.base !== 'cvta') return false;
    if (x.ins.base !== 'bra') { stack.push(k + 1); continue; }
    stack.push(at(branchTarget(x)));
    if (x.ins.guard) stack.push(k + 1);
  }
  // The loop's own code: from its first label to the test's branches.
  let first = i;
  for (let j = i - 1; j >= 0; j--) { const x = items[j]!; if ('label' in x && labels.has(x.label)) first = j; }
  const written = new Set<string>();
  for (const k of region) { const x = items[k]!; if (!('label' in x)) for (const d of destsOf(x)) written.add(d); }
  for (let k = 0; k < items.length; k++) {
    const x = items[k]!;
    if (region.has(k) || (k >= first && k <= i + 3) || 'label' in x) continue;
    const reads = [...sourcesOf(x).flatMap((o) => regsOf(o, x)), ...(x.ins.guard ? [x.name(x.ins.guard.pred)] : [])];
    if (reads.some((r) => written.has(r))) return false;
  }
  return true;
}

/** A global flag spin loop's exit condition: the loop ends once `value cmp target` (target: the setp's second operand). */
export interface GlobalSpin {
  cmp: 'eq' | 'ne' | 'ge' | 'gt' | 'le' | 'lt';
  target: Operand;
}

const CMP: Record<string, GlobalSpin['cmp']> = { eq: 'eq', ne: 'ne', lt: 'lt', lo: 'lt', le: 'le', ls: 'le', gt: 'gt', hi: 'gt', ge: 'ge', hs: 'ge' };
const NEG: Record<GlobalSpin['cmp'], GlobalSpin['cmp']> = { eq: 'ne', ne: 'eq', lt: 'ge', ge: 'lt', le: 'gt', gt: 'le' };

/**
 * Whether flat item `i` is the load of a global flag spin loop
 * `L: ld.acquire.gpu.global.u32 r, [a]; setp.CMP p, r, K; @p bra L;` (`while (flag CMP K);`, also
 * with `@!p`): the machine's `spin.global`, which blocks until the value ends the loop.
 */
export function globalSpin(flat: Flat, i: number): GlobalSpin | undefined {
  const it = flat.items[i];
  if (!it || 'label' in it || it.ins.base !== 'ld' || it.ins.guard) return undefined;
  const labels = new Set<string>();
  for (let j = i - 1; j >= 0; j--) { const x = flat.items[j]!; if (!('label' in x)) break; labels.add(x.label); }
  const setp = flat.items[i + 1];
  const bra = flat.items[i + 2];
  if (!labels.size || !setp || 'label' in setp || !bra || 'label' in bra || setp.ins.base !== 'setp' || bra.ins.base !== 'bra' || !bra.ins.guard) return undefined;
  const r = nameOf(it, it.ins.operands[0]);
  const [p, a, k] = setp.ins.operands;
  const cmp = CMP[setp.ins.mods[0] ?? ''];
  if (!cmp || !r || nameOf(setp, a) !== r || !k || nameOf(setp, p) !== bra.name(bra.ins.guard.pred) || !labels.has(branchTarget(bra) ?? '')) return undefined;
  // The loop goes on while the predicate (negated: while it is false) holds; it ends on the opposite.
  return { cmp: bra.ins.guard.negated ? cmp : NEG[cmp], target: k };
}
