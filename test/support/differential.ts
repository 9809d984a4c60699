/**
 * The differential oracle of the checker's reductions: a kernel is checked with every reduction
 * on, with none, and with each alone; the hazards reachable (kind and subject, `--all --strict`)
 * and the final states reached must be the same; and the parallel search (`workers: 2`) must find
 * what one worker finds ({@link compareWorkers}). Used by test/check-differential.test.ts and the
 * long soak (`npm run fuzz`).
 */
import { check, type CheckOptions, type CheckResult } from '../../src/check/check.js';
import { BUILTINS, instantiate, KernelError, type Program } from '../../src/machine/program.js';
import type { MachineState } from '../../src/machine/machine.js';
import type { Kernel } from '../../src/kernel/ir.js';
import { analyse } from '../../src/check/analysis.js';
import type { CtaPerm } from '../../src/check/cta-symmetry.js';

/** What one configuration of the search found. */
export interface Outcome {
  complete: boolean;
  states: number;
  /** `kind|subject` of every hazard and warning, sorted. */
  hazards: string[];
  /** Canonical text of every final state, sorted. */
  finals: string[];
  /** Symmetry groups the search used (0: symmetry reduction had nothing to reduce). */
  groups: number;
}

/**
 * A final state as text, independent of the order of interchangeable agents (symmetry) and, when
 * `perms` are given, of a permutation of CTA ranks (the least text of the images).
 */
export function finalText(p: Program, s: MachineState, perms: readonly CtaPerm[] = []): string {
  let best = finalTextAs(p, s, null);
  for (const perm of perms) {
    const t = finalTextAs(p, s, perm);
    if (t < best) best = t;
  }
  return best;
}

/** {@link finalText} of the image of `s` under `perm` (null: `s` itself). */
function finalTextAs(p: Program, s: MachineState, perm: CtaPerm | null): string {
  const groups = new Map<string, string[]>();
  s.agents.forEach((a, i) => {
    const info = p.agents[perm ? perm.agent[i]! : i]!;
    const key = `${info.roleName}@${info.cta}`;
    const rec = `${a.status}:${a.pc}:${a.frame.slice(BUILTINS.length).join(',')}`;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(rec);
  });
  const agents = [...groups].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, l]) => `${k}=${l.sort().join('|')}`);
  const bars = new Array<string>(s.bars.length);
  s.bars.forEach((b, k) => (bars[perm ? perm.bar[k]! : k] = `${b.status}/${b.phase}/${b.pending}/${b.expected}/${b.tx}`));
  // Memory cells are not permuted: CTA symmetry is off for kernels with values (cta-symmetry.ts).
  return `${agents.join(' ')} ; ${bars.join(' ')}${s.mem.length ? ` ; ${s.mem.join(',')}` : ''}`;
}

/**
 * A hazard's subject up to the CTA permutations of `p` (when it has any): the CTA of a barrier,
 * buffer or agent, and the element index of an array the permutations move, are left out.
 */
export function subjectUpToCtas(p: Program, name: string, perms: readonly CtaPerm[]): string {
  if (!perms.length) return name;
  const moved = new Set<string>();
  for (const b of p.buffers) for (let j = 0; j < b.length; j++) {
    const k = b.offset + j;
    if (perms.some((q) => q.buf[k]! % p.buffersPerCta !== k)) moved.add(b.name);
  }
  let n = name.replace(/@c\d+/g, '@c*');
  for (const m of moved) n = n.split(`${m}[`).map((part, i) => (i === 0 ? part : part.replace(/^\d+\]/, '*]'))).join(`${m}[`);
  return n;
}

/** The CTA permutations the fully reduced search identifies states under. */
export function ctaPerms(p: Program): CtaPerm[] {
  return analyse(p).cta.perms;
}

/** Runs one configuration; finals and subjects are compared up to the CTA permutations `perms`. */
export function outcome(p: Program, opts: CheckOptions, perms: readonly CtaPerm[] = ctaPerms(p)): Outcome {
  const finals = new Set<string>();
  const r: CheckResult = check(p, { all: true, strict: true, ...opts, onTerminal: (s) => finals.add(finalText(p, s, perms)) });
  // A hang's subject is its first blocked agent's, and which of interchangeable agents comes first
  // depends on the representative the symmetry reduction keeps: hangs and cycles compare by kind.
  const key = (h: { kind: string; subject: { name: string } | null }) => (h.kind === 'hang' || h.kind === 'cycle' ? h.kind : `${h.kind}|${subjectUpToCtas(p, h.subject?.name ?? '', perms)}`);
  const hazards = [...new Set([...r.hazards, ...r.warnings].map(key))].sort();
  return { complete: r.complete, states: r.coverage.states, hazards, finals: [...finals].sort(), groups: r.coverage.symmetry.length + r.coverage.ctaSymmetry.permutations.length };
}

/** The configurations compared with the unreduced search. */
export const REDUCED: Record<string, CheckOptions> = {
  all: {},
  por: { symmetry: false },
  symmetry: { por: false },
};

/** A difference between the unreduced search and one reduced configuration. */
export interface Divergence {
  config: string;
  missing: string[];
  extra: string[];
  finalsMissing: number;
  finalsExtra: number;
}

/**
 * The fully reduced search runs first, bounded at this share of the bound; a kernel it does not
 * finish is not compared (its unreduced search would pass the bound after the longest search of
 * all). On 80 generated kernels (seed 20261201) the unreduced searches of the kernels skipped for
 * passing the bound took 3-4x the time of all the compared ones; with 0.4 the same 63 kernels are
 * compared (the largest reduced search among them: 7,604 states, for 14,476 unreduced) in 49 s
 * instead of 65 s (back to back on a loaded 2-core machine).
 */
export const REDUCED_SHARE = 0.4;

/** Result of comparing one kernel (every search with the options `base` too: `{ strict: false }`): null when it cannot be compared (rejected by instantiate, or the full search, or the reduced one beyond {@link REDUCED_SHARE}, is too big). */
export function compare(k: Kernel, maxStates = 20_000, base: CheckOptions = {}): { full: Outcome; divergences: Divergence[] } | null {
  let p: Program;
  try {
    p = instantiate(k);
  } catch (e) {
    if (e instanceof KernelError) return null;
    throw e;
  }
  // Every reduction first: a kernel whose reduced search is already large is skipped without the
  // unreduced one, which would (almost always) pass the bound after the longest search of all.
  const all = outcome(p, { ...base, maxStates: Math.floor(maxStates * REDUCED_SHARE), timeout: 20_000 });
  if (!all.complete) return null;
  const full = outcome(p, { ...base, por: false, symmetry: false, maxStates, timeout: 20_000 });
  if (!full.complete) return null;
  const divergences: Divergence[] = [];
  const groups = all.groups;
  for (const [config, opts] of Object.entries(REDUCED)) {
    // Without symmetry groups, `por` is the search `all` ran and `symmetry` the unreduced one.
    if (groups === 0 && config !== 'all') continue;
    const red = config === 'all' ? all : outcome(p, { ...base, ...opts, timeout: 20_000 });
    const missing = full.hazards.filter((h) => !red.hazards.includes(h));
    const extra = red.hazards.filter((h) => !full.hazards.includes(h));
    const finalsMissing = full.finals.filter((f) => !red.finals.includes(f)).length;
    const finalsExtra = red.finals.filter((f) => !full.finals.includes(f)).length;
    if (!red.complete || missing.length || extra.length || finalsMissing || finalsExtra) divergences.push({ config, missing, extra, finalsMissing, finalsExtra });
  }
  return { full, divergences };
}

/** What the parallel search is defined to find equal to one worker: verdict, completeness, stored states and the distinct hazards. */
export interface WorkerOutcome {
  verdict: string;
  complete: boolean;
  states: number;
  /** `kind|subject` of every hazard and warning (hangs and cycles by kind, as in {@link outcome}), sorted. */
  hazards: string[];
}

function workerOutcome(r: CheckResult): WorkerOutcome {
  const key = (h: { kind: string; subject: { name: string } | null }) => (h.kind === 'hang' || h.kind === 'cycle' ? h.kind : `${h.kind}|${h.subject?.name ?? ''}`);
  return { verdict: r.verdict, complete: r.complete, states: r.coverage.states, hazards: [...new Set([...r.hazards, ...r.warnings].map(key))].sort() };
}

/**
 * `--workers 2` against one worker, every reduction on, `--all --strict`: the outcomes must be equal
 * (how many sites of one (kind, subject) are listed, and which shortest schedule, may differ: the
 * parallel search meets the sites of a forced chain in another order). Null when the kernel is
 * rejected or one worker does not finish within `maxStates`.
 */
export function compareWorkers(k: Kernel, maxStates = 20_000): { one: WorkerOutcome; two: WorkerOutcome } | null {
  let p: Program;
  try {
    p = instantiate(k);
  } catch (e) {
    if (e instanceof KernelError) return null;
    throw e;
  }
  const opts: CheckOptions = { all: true, strict: true, maxStates, timeout: 20_000 };
  const one = workerOutcome(check(p, opts));
  if (!one.complete) return null;
  // The first parallel search starts the worker threads (from the TypeScript sources: seconds, more
  // on a loaded machine); a search whose workers are not ready by its deadline stops by timeout.
  return { one, two: workerOutcome(check(p, { ...opts, workers: 2, timeout: 300_000 })) };
}
