/**
 * Symmetry between the CTAs of a cluster, for the checker: the permutations π of CTA ranks under
 * which the program is invariant, each as maps of agents, CTAs, barrier keys and buffer keys.
 *
 * Candidates are the rotations r ↦ (r + d) mod C of the cluster's ranks (for C = 2: the swap), the
 * same π in every cluster of the grid. π is accepted only when renaming every CTA rank r into π(r)
 * maps every transition of the program to a transition (docs/CHECK.md, "Symmetry between CTAs"):
 * - every agent has an image: the agent of the same role, instance and warp in CTA π(r) of its
 *   cluster (a role that runs only in some CTAs, `where=` / `ctas`, has none);
 * - every expression that reads `cta`, evaluated for an agent and for its image (each maximal
 *   subexpression that names only parameters and builtins, as in warp-signature.ts), gives equal
 *   values where it is a value (variables, loop bounds, counts, bytes, parities, branch conditions,
 *   barrier indices, byte offsets), π of the value where it selects a CTA (`@c` of a barrier or
 *   buffer), and π of the selected ranks where it is a multicast mask (machine/cta-mask.ts);
 * - a buffer index that reads `cta` is `E + k·cta` with E a multiple of C·k: the element it names
 *   in CTA r's code and the one it names in CTA π(r)'s code are one σ apart, σ the permutation of
 *   the array's elements that moves sub-block r of each block of C·k elements to sub-block π(r);
 *   then every other reference to that array must name a σ-closed set of elements in one operation
 *   (a wgmma reading both halves `B[2 * s]`, `B[2 * s + 1]`), since its image names σ of them.
 * - symmetry groups of warps (sym-groups.ts) map onto groups.
 * Kernels with values or global memory, `resident=` below the grid, arrays pinned to one CTA
 * (`cta=N`), `.cta_group::2` MMAs or the memory-model detector's bookkeeping (relaxed arrives and
 * waits) get no CTA symmetry: their reason is {@link CtaSymmetry.reason}. Roles run as written
 * (PTX), whose warps read the rank into registers, are checked on their warp-relative analyses
 * instead (cta-relative.ts), with the same program conditions and maps.
 */
import { evalExpr, exprNames } from '../kernel/expr.js';
import type { BufRef, Expr, Stmt } from '../kernel/ir.js';
import { maskRanks } from '../machine/cta-mask.js';
import { BUILTINS, type AgentInfo, type Program } from '../machine/program.js';
import type { Analysis } from './analysis.js';

/** One CTA permutation with its maps (image of index i at i; -1 never occurs). */
export interface CtaPerm {
  /** π over the ranks of a cluster. */
  rank: number[];
  agent: Int32Array;
  /** Global CTA index → image. */
  cta: Int32Array;
  bar: Int32Array;
  buf: Int32Array;
}

/** The CTA permutations the search identifies states under (empty: none), or why there are none. */
export interface CtaSymmetry {
  perms: CtaPerm[];
  /** Why no permutation applies (null when some does, or the cluster has one CTA). */
  reason: string | null;
}

const isExpr = (e: unknown): e is Expr => {
  const k = (e as { k?: unknown } | null | undefined)?.k;
  return k === 'num' || k === 'var' || k === 'bin' || k === 'un';
};
const isRef = (v: unknown): v is BufRef => !!v && typeof v === 'object' && typeof (v as BufRef).name === 'string' && isExpr((v as BufRef).index);

/** Names a role assigns (`let` and loop variables). */
function assigned(body: readonly Stmt[], out: Set<string> = new Set()): Set<string> {
  for (const st of body) {
    if (st.s === 'let') out.add(st.name);
    else if (st.s === 'for') { out.add(st.var); assigned(st.body, out); }
    else if (st.s === 'if') { assigned(st.then, out); if (st.else) assigned(st.else, out); }
    else if (st.s === 'elect') assigned(st.body, out);
  }
  return out;
}

/** A linear form c + k·cta + Σ coefficient·atom of an integer expression, or null (not linear in `cta`). */
interface Lin { k: number; c: number; atoms: Map<string, number> }

function lin(e: Expr, params: Record<string, number>, asg: Set<string>): Lin | null {
  const atom = (x: Expr): Lin => ({ k: 0, c: 0, atoms: new Map([[JSON.stringify(x, (key, v) => (key === 'loc' ? undefined : v)), 1]]) });
  if (e.k === 'num') return { k: 0, c: e.v, atoms: new Map() };
  if (e.k === 'var') {
    if (e.name === 'cta' && !asg.has('cta')) return { k: 1, c: 0, atoms: new Map() };
    if (!asg.has(e.name) && Object.hasOwn(params, e.name) && !(BUILTINS as readonly string[]).includes(e.name)) return { k: 0, c: params[e.name]!, atoms: new Map() };
    return atom(e);
  }
  const readsCta = exprNames(e).has('cta');
  if (e.k === 'bin' && (e.op === '+' || e.op === '-' || e.op === '*')) {
    const a = lin(e.a, params, asg);
    const b = lin(e.b, params, asg);
    if (!a || !b) return null;
    const konst = (l: Lin) => l.k === 0 && l.atoms.size === 0;
    if (e.op === '*') {
      const [f, g] = konst(a) ? [a.c, b] : konst(b) ? [b.c, a] : [null, null];
      if (f === null) return readsCta ? null : atom(e);
      return { k: f * g!.k, c: f * g!.c, atoms: new Map([...g!.atoms].map(([n, v]) => [n, f * v])) };
    }
    const s = e.op === '+' ? 1 : -1;
    const atoms = new Map(a.atoms);
    for (const [n, v] of b.atoms) atoms.set(n, (atoms.get(n) ?? 0) + s * v);
    return { k: a.k + s * b.k, c: a.c + s * b.c, atoms };
  }
  return readsCta ? null : atom(e);
}

const restKey = (l: Lin) => [...l.atoms].filter(([, v]) => v !== 0).sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, v]) => `${v}*${n}`).join('+');
const mod = (a: number, m: number) => ((a % m) + m) % m;
const multipleOf = (l: Lin, m: number) => mod(l.c, m) === 0 && [...l.atoms.values()].every((v) => mod(v, m) === 0);

/** The element σ maps `j` to: sub-block d = ⌊j / k⌋ mod C of its block moves to π(d). */
function sigma(j: number, k: number, rank: readonly number[]): number {
  const C = rank.length;
  const d = mod(Math.floor(j / k), C);
  return j + (rank[d]! - d) * k;
}

/** Why `p` can have no CTA symmetry at all, or null. */
export function programReason(p: Program, an: Analysis): string | null {
  if (p.values) return 'the kernel uses values or global memory (cells are per CTA)';
  if (p.resident < p.grid) return 'resident= is below the grid';
  if (an.trackRelaxed) return 'relaxed arrives or waits (the memory-model detector keeps per-CTA records)';
  const pinned = [...p.barriers, ...p.buffers].find((b) => b.ctaOnly >= 0);
  if (pinned) return `${pinned.name} is held by CTA ${pinned.ctaOnly} only`;
  for (const rc of p.roles) for (const ins of rc.code) if (ins.i === 'op' && ins.op.op === 'tcgen05.mma' && ins.op.pair) return `${rc.name} issues .cta_group::2 MMAs (a CTA pair)`;
  return null;
}

/** The agent map of π, or a reason: the agent of the same cluster, role, instance and warp at rank π(r). */
export function agentMap(p: Program, rank: readonly number[]): Int32Array | string {
  const at = new Map<string, number>();
  const key = (a: AgentInfo, r: number) => `${a.cluster}:${r}:${a.role}:${a.instance}:${a.warp}`;
  for (const a of p.agents) at.set(key(a, a.rank), a.id);
  const m = new Int32Array(p.agents.length);
  for (const a of p.agents) {
    const b = at.get(key(a, rank[a.rank]!));
    if (b === undefined) return `${a.roleName} has no counterpart in CTA ${rank[a.rank]} (it runs only in some CTAs)`;
    m[a.id] = b;
  }
  return m;
}

/**
 * Checks every expression of every role for the agent pairs (a, π(a)) (see the module comment);
 * returns the σ block size k of each array that needs one, or a reason.
 */
function checkCode(p: Program, perm: Int32Array, rank: readonly number[]): Map<string, number> | string {
  const C = p.clusterSize;
  const blocks = new Map<string, number>();
  /** Per operation: its rank-independent references by array (for the σ-closed check). */
  const roleOps: Map<string, Lin[]>[] = [];
  for (const rc of p.roles) {
    const asg = assigned(rc.decl.body);
    if (asg.has('cta')) return `${rc.name} assigns cta`;
    const agents = p.agents.filter((a) => p.roles[a.role] === rc);
    const envOf = (a: AgentInfo) => {
      const b: Record<string, number> = { cta: a.rank, instance: a.instance, ncta: C, clusterid: a.cluster, nthreads: rc.threads, nwarps: rc.warps, warp: a.warp, warpgroup: a.warp >> 2 };
      return (n: string): number | undefined => (asg.has(n) ? undefined : Object.hasOwn(b, n) ? b[n] : Object.hasOwn(p.params, n) ? p.params[n] : undefined);
    };
    const pairs = agents.map((a) => [envOf(a), envOf(p.agents[perm[a.id]!]!)] as const);
    const val = (e: Expr, env: (n: string) => number | undefined) => {
      try {
        return evalExpr(e, env);
      } catch {
        return NaN;
      }
    };
    const isStatic = (e: Expr) => [...exprNames(e)].every((n) => !asg.has(n) && (Object.hasOwn(p.params, n) || (BUILTINS as readonly string[]).includes(n)));
    const same = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));
    /** Every maximal static subexpression of `e` that reads `cta` has equal values for a and π(a). */
    const invariant = (e: Expr | undefined, what: string): string | null => {
      if (!e || !exprNames(e).has('cta')) return null;
      if (isStatic(e)) return pairs.every(([x, y]) => same(val(e, x), val(e, y))) ? null : `${rc.name}: ${what} depends on the CTA rank`;
      if (e.k === 'bin') return invariant(e.a, what) ?? invariant(e.b, what);
      if (e.k === 'un') return invariant(e.a, what);
      return `${rc.name}: ${what} depends on the CTA rank`;
    };
    const selector = (e: Expr | undefined, what: string): string | null => {
      if (!e) return null;
      if (!isStatic(e)) return `${rc.name}: the CTA of ${what} is not a function of the rank alone`;
      const ok = pairs.every(([x, y]) => {
        const u = val(e, x);
        const v = val(e, y);
        if (!(u >= 0 && u < C)) return same(u, v) || !(v >= 0 && v < C);
        return v === rank[u];
      });
      return ok ? null : `${rc.name}: the CTA of ${what} does not follow the CTA permutation`;
    };
    const mask = (e: Expr): string | null => {
      if (!isStatic(e)) return `${rc.name}: a multicast mask is not a function of the rank alone`;
      const ok = pairs.every(([x, y]) => {
        const u = maskRanks(val(e, x), C);
        const v = maskRanks(val(e, y), C);
        if (!Array.isArray(u) || !Array.isArray(v)) return !Array.isArray(u) && !Array.isArray(v);
        return u.map((r) => rank[r]!).sort((a, b) => a - b).join() === v.join();
      });
      return ok ? null : `${rc.name}: a multicast mask does not follow the CTA permutation`;
    };
    /** References of one operation to arrays with a σ: the σ-closed check needs them together. */
    const plain = new Map<string, Lin[]>();
    const bufRef = (r: BufRef, isBar: boolean): string | null => {
      const what = `${r.name}[${'…'}]`;
      const bad = selector(r.cta, what) ?? invariant(r.offset, `the byte offset into ${r.name}`);
      if (bad) return bad;
      if (isBar || !exprNames(r.index).has('cta')) {
        if (!isBar) {
          const l = lin(r.index, p.params, asg);
          (plain.get(r.name) ?? plain.set(r.name, []).get(r.name)!).push(l ?? { k: 0, c: NaN, atoms: new Map() });
        }
        return invariant(r.index, `the index of ${r.name}`);
      }
      if (isStatic(r.index) && pairs.every(([x, y]) => same(val(r.index, x), val(r.index, y)))) return null;
      const l = lin(r.index, p.params, asg);
      if (!l || l.k === 0) return `${rc.name}: the index of ${r.name} depends on the CTA rank other than as E + k·cta`;
      const k = l.k;
      const info = p.buffers.find((b) => b.name === r.name)!;
      const shared = p.buffers.filter((b) => b.alloc === info.alloc).length > 1;
      if (k < 0 || info.ranged || shared || r.offset || info.length % (C * k) !== 0 || !multipleOf({ ...l, k: 0 }, C * k)) return `${rc.name}: the index of ${r.name} is rank-relative in a way the CTA symmetry does not map (k·cta blocks)`;
      if ((blocks.get(r.name) ?? k) !== k) return `${rc.name}: ${r.name} is indexed with two different multiples of cta`;
      blocks.set(r.name, k);
      return null;
    };
    const scanOp = (op: Record<string, unknown>): string | null => {
      plain.clear();
      for (const [f, v] of Object.entries(op)) {
        if (f === 'multicast' && isExpr(v)) {
          const b = mask(v);
          if (b) return b;
        } else if (isRef(v)) {
          const b = bufRef(v, f === 'bar');
          if (b) return b;
        } else if (Array.isArray(v)) {
          for (const x of v) if (isRef(x)) {
            const b = bufRef(x, false);
            if (b) return b;
          }
        } else if (isExpr(v)) {
          const b = invariant(v, `operand ${f}`);
          if (b) return b;
        }
      }
      groupsOfOp.push(new Map(plain));
      return null;
    };
    const groupsOfOp: Map<string, Lin[]>[] = [];
    const walk = (body: readonly Stmt[]): string | null => {
      for (const st of body) {
        let b: string | null = null;
        if (st.s === 'let') b = invariant(st.value, `the value of ${st.name}`);
        else if (st.s === 'for') b = invariant(st.from, 'a loop bound') ?? invariant(st.to, 'a loop bound') ?? invariant(st.step, 'a loop step') ?? walk(st.body);
        else if (st.s === 'if') b = invariant(st.cond, 'a branch condition') ?? walk(st.then) ?? (st.else ? walk(st.else) : null);
        else if (st.s === 'elect') b = walk(st.body);
        else if (st.s === 'label') b = null;
        else if (st.s === 'goto') b = st.cond ? invariant(st.cond, 'a branch condition') : null;
        else b = scanOp(st.op as unknown as Record<string, unknown>);
        if (b) return b;
      }
      return null;
    };
    const b = walk(rc.decl.body);
    if (b) return b;
    roleOps.push(...groupsOfOp);
  }
  // Rank-independent references to an array with a σ: one operation's must name a σ-closed set.
  for (const [name, k] of blocks) {
    for (const g of roleOps) {
      const refs = g.get(name);
      if (!refs) continue;
      const M = C * k;
      const rest = refs.map(restKey);
      if (refs.some((l) => Number.isNaN(l.c) || !multipleOf({ ...l, c: 0 }, M)) || rest.some((x) => x !== rest[0])) return `${name} is also read or written at an index the CTA permutation moves`;
      const cs = new Set(refs.map((l) => l.c));
      for (const c of cs) if (!cs.has(sigma(c, k, rank))) return `an access of ${name} names only some of the elements that the CTAs' copies of it fill`;
    }
  }
  return blocks;
}

/** The barrier and buffer key maps of π (σ on the arrays in `blocks`). */
export function keyMaps(p: Program, rank: readonly number[], blocks: Map<string, number>): { bar: Int32Array; buf: Int32Array; cta: Int32Array } {
  const C = p.clusterSize;
  const cta = new Int32Array(p.ctas);
  for (let c = 0; c < p.ctas; c++) cta[c] = Math.floor(c / C) * C + rank[c % C]!;
  const bar = new Int32Array(p.ctas * p.barriersPerCta);
  for (let key = 0; key < bar.length; key++) bar[key] = cta[Math.floor(key / p.barriersPerCta)]! * p.barriersPerCta + (key % p.barriersPerCta);
  const buf = new Int32Array(p.ctas * p.buffersPerCta);
  const elem = new Int32Array(p.buffersPerCta);
  for (let o = 0; o < p.buffersPerCta; o++) elem[o] = o;
  for (const [name, k] of blocks) {
    const info = p.buffers.find((b) => b.name === name)!;
    for (let j = 0; j < info.length; j++) elem[info.offset + j] = info.offset + sigma(j, k, rank);
  }
  for (let key = 0; key < buf.length; key++) buf[key] = cta[Math.floor(key / p.buffersPerCta)]! * p.buffersPerCta + elem[key % p.buffersPerCta]!;
  return { bar, buf, cta };
}

/** Whether π maps every symmetry group of warps onto a group, with its private buffers. */
export function groupsMap(an: Analysis, agent: Int32Array, buf: Int32Array): boolean {
  const byFirst = new Map<number, number>();
  an.groups.forEach((g, gi) => g.agents.forEach((a) => byFirst.set(a, gi)));
  for (const g of an.groups) {
    const img = g.agents.map((a) => agent[a]!);
    const gi = byFirst.get(img[0]!);
    if (gi === undefined) return false;
    const h = an.groups[gi]!;
    if (h.agents.length !== img.length || !img.every((a) => h.agents.includes(a))) return false;
    for (let i = 0; i < g.agents.length; i++) {
      const mine = g.privateBufs[i]!.map((k) => buf[k]!).sort((a, b) => a - b).join();
      const theirs = h.privateBufs[h.agents.indexOf(img[i]!)]!.slice().sort((a, b) => a - b).join();
      if (mine !== theirs) return false;
    }
  }
  for (let a = 0; a < agent.length; a++) if ((an.groupOf[a]! >= 0) !== (an.groupOf[agent[a]!]! >= 0)) return false;
  return true;
}

/** The CTA permutations `p` is invariant under (see the module comment); `tick` is called before each (a bound throws there). */
export function ctaSymmetry(p: Program, an: Analysis, tick: () => void = () => {}): CtaSymmetry {
  const C = p.clusterSize;
  if (C < 2) return { perms: [], reason: null };
  const why = programReason(p, an);
  if (why) return { perms: [], reason: why };
  const perms: CtaPerm[] = [];
  let reason: string | null = null;
  for (let d = 1; d < C; d++) {
    tick();
    const rank = Array.from({ length: C }, (_, r) => (r + d) % C);
    const agent = agentMap(p, rank);
    if (typeof agent === 'string') { reason ??= agent; continue; }
    const blocks = checkCode(p, agent, rank);
    if (typeof blocks === 'string') { reason ??= blocks; continue; }
    const maps = keyMaps(p, rank, blocks);
    if (!groupsMap(an, agent, maps.buf)) { reason ??= 'the warp symmetry groups of two CTAs differ'; continue; }
    perms.push({ rank, agent, ...maps });
  }
  return { perms, reason: perms.length ? null : reason };
}
