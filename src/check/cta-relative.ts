/**
 * Symmetry between the CTAs of a cluster for roles run as written (PTX input; docs/CHECK.md,
 * "Symmetry between CTAs" and "Warp-relative symmetry"), composed with warp-relative symmetry.
 *
 * A PTX warp reads its CTA rank (`%cluster_ctarank`, `%ctaid`) into registers, so the sketch
 * check of cta-symmetry.ts (each maximal static subexpression that reads `cta`) refuses it at the
 * first `mov`. Here the warps are compared *specialized to their builtins* instead, with the
 * analysis of warp-relative.ts: for a rotation π of the ranks, agent a (CTA r, warp w) and its
 * image b (CTA π(r), warp w, same role and instance) must have
 * - equal signatures except at the operands that select a CTA (a barrier or buffer reference's
 *   `@cta`, a multicast mask) or a buffer element (a buffer reference's index: `WarpRelative.ctaSig`;
 *   a reference's byte offset inside its element is compared as it is, and its values bound the
 *   byte ranges the references name, cta-elements.ts),
 *   so the same branches, the same values of every other operand (barrier indices, counts, bytes,
 *   parities), the same kept slots at every rest and the same forms of what changes in them;
 * - at each buffer reference, the elements a names mapped through σ equal b's (cta-elements.ts);
 * - at each CTA-selecting operand, a's values mapped through π equal b's, row by row over the same
 *   free values' sets: a rank v in 0 .. C−1 becomes π(v) (another value stays, and faults alike), a
 *   mask's 16 bits have bit r moved to π(r) (the higher bits stay); a selector whose form is text
 *   (not a known value or a table) refuses π.
 * Barrier keys map CTA-wise only (a barrier index that differs between the CTAs refuses π); buffer
 * keys map CTA-wise composed with σ, the permutation of buffer elements read off the element
 * indices that differ between a and b (a CTA's own part of a multicast buffer) and checked on every
 * operation (cta-elements.ts); σ is the identity when no index differs. With the program conditions of cta-symmetry.ts (no values, full residency, no
 * pinned arrays, no CTA pairs, no relaxed bookkeeping) and the warp groups mapping onto groups,
 * this is the sketch rule with the rank known per warp: from a record of a at a position and its
 * image at b (the same kept slots, each agent's own known slots) both walk the same instructions,
 * every value either reads is the same function of the kept slots (whose values lie in the
 * shared value sets where a table compares them), so they take the same edges and issue the same
 * operations up to π of the CTAs they name; the step of a maps to the step of b, hazards and final
 * states to their images.
 */
import type { AgentInfo, Program } from '../machine/program.js';
import { ctaMask16 } from '../machine/cta-mask.js';
import type { Analysis } from './analysis.js';
import { collectPairs, elemOps, elementKeyMap, elementPerm, opsFollow, reachableKeys, type ElemOp } from './cta-elements.js';
import { agentMap, groupsMap, keyMaps, programReason, type CtaPerm, type CtaSymmetry } from './cta-symmetry.js';
import type { WarpRelative } from './warp-relative.js';

/** The value a CTA-selecting operand of a takes in its image b under π (`rank`), for comparison with b's own. */
function mapped(kind: 'cta' | 'mask', v: number | 'F', rank: readonly number[]): number | 'F' {
  if (v === 'F') return v;
  const C = rank.length;
  if (kind === 'cta') return Number.isInteger(v) && v >= 0 && v < C ? rank[v]! : v;
  const m = ctaMask16(v);
  let out = m & ~((1 << C) - 1);
  for (let r = 0; r < C; r++) if (m & (1 << r)) out |= 1 << rank[r]!;
  return out;
}

/** A mask compared by its 16 bits (what the machine reads), a rank as it is. */
const norm = (kind: 'cta' | 'mask', v: number | 'F'): number | 'F' => (kind === 'mask' && v !== 'F' ? ctaMask16(v) : v);

const where = (a: AgentInfo) => `${a.roleName} warp ${a.warp} of CTA ${a.rank}`;

/** Why agent a (rel `ra`) does not map onto b (rel `rb`) under π (`rank`), or null when it does. */
function agentReason(a: AgentInfo, b: AgentInfo, ra: WarpRelative, rb: WarpRelative, rank: readonly number[]): string | null {
  if (ra.ctaSig !== rb.ctaSig || ra.sels.length !== rb.sels.length) {
    const la = ra.ctaSig.split('\n');
    const lb = rb.ctaSig.split('\n');
    let i = 0;
    while (i < la.length && la[i] === lb[i]) i++;
    const pc = /^L?(\d+)/.exec(la[i] ?? lb[i] ?? '')?.[1];
    return `${where(a)} and ${where(b)} run differently${pc !== undefined ? ` (from instruction ${pc} of the translated code)` : ''}, other than in the CTAs they name`;
  }
  for (let i = 0; i < ra.sels.length; i++) {
    const x = ra.sels[i]!;
    const y = rb.sels[i]!;
    if (x.kind !== y.kind) return `${where(a)} and ${where(b)} run differently, other than in the CTAs they name`;
    // Buffer elements are compared through the element permutation (cta-elements.ts); a byte offset
    // inside an element is the same in a and its image (σ moves whole elements).
    if (x.kind === 'elem') continue;
    if (x.kind === 'off') {
      if (x.form !== y.form) return `${where(a)} and ${where(b)} run differently (a byte offset inside a buffer element differs), other than in the CTAs they name`;
      continue;
    }
    const what = x.kind === 'cta' ? 'the CTA of a barrier or buffer' : 'a multicast mask';
    if (!x.table || !y.table) return `${where(a)}: ${what} is not a function of its rank the analysis can tabulate`;
    if (x.kind !== y.kind || x.table.head !== y.table.head || x.table.vals.length !== y.table.vals.length) return `${where(a)}: ${what} depends on values that differ between the CTAs`;
    for (let j = 0; j < x.table.vals.length; j++) {
      if (mapped(x.kind, x.table.vals[j]!, rank) !== norm(x.kind, y.table.vals[j]!)) return `${where(a)}: ${what} does not follow the CTA permutation`;
    }
  }
  return null;
}

/**
 * The CTA-local buffer key map of the element permutation paired with the agent map `agent`
 * (cta-elements.ts): σ read off every agent's buffer references and their images', then checked on
 * every operation; the identity when no element differs. A reason when the elements do not follow.
 */
function elementMaps(p: Program, agent: Int32Array, rel: readonly (WarpRelative | null)[]): Int32Array | string {
  const ops: ElemOp[][] = [];
  const pairs = new Map<number, Map<number, number>>();
  for (const a of p.agents) {
    const o = elemOps(p, p.roles[a.role]!, rel[a.id]!);
    if (typeof o === 'string') return `${where(a)}: ${o}`;
    ops[a.id] = o;
    const bad = collectPairs(p, o, rel[a.id]!, rel[agent[a.id]!]!, pairs);
    if (bad) return `${where(a)}: ${bad}`;
  }
  const sigma = elementPerm(p, pairs);
  if (typeof sigma === 'string') return sigma;
  const km = elementKeyMap(p, sigma, reachableKeys(p, ops, rel, sigma));
  if (typeof km === 'string') return km;
  for (const a of p.agents) {
    const bad = opsFollow(p, ops[a.id]!, rel[a.id]!, rel[agent[a.id]!]!, sigma, km.local, km.fixedStart);
    if (bad) return `${where(a)}: ${bad}`;
  }
  return km.local;
}

/**
 * The CTA permutations of a program whose roles all run as written (PTX), checked on the agents'
 * warp-relative analyses `rel` (see the module comment); null when some role is not run as written
 * (the sketch check of cta-symmetry.ts applies). `tick` is called before each permutation.
 */
export function ptxCtaSymmetry(p: Program, an: Analysis, rel: readonly (WarpRelative | null)[], tick: () => void = () => {}): CtaSymmetry | null {
  if (!p.roles.every((rc) => rc.decl.asWritten)) return null;
  const C = p.clusterSize;
  if (C < 2) return { perms: [], reason: null };
  const why = programReason(p, an);
  if (why) return { perms: [], reason: why };
  const missing = p.agents.find((a) => !rel[a.id]);
  if (missing) return { perms: [], reason: `${where(missing)} is not analysed (warp-relative symmetry gave up on its code)` };
  const perms: CtaPerm[] = [];
  let reason: string | null = null;
  for (let d = 1; d < C; d++) {
    tick();
    const rank = Array.from({ length: C }, (_, r) => (r + d) % C);
    const agent = agentMap(p, rank);
    if (typeof agent === 'string') { reason ??= agent; continue; }
    let bad: string | null = null;
    for (const a of p.agents) {
      bad = agentReason(a, p.agents[agent[a.id]!]!, rel[a.id]!, rel[agent[a.id]!]!, rank);
      if (bad) break;
    }
    if (bad) { reason ??= bad; continue; }
    const buf = elementMaps(p, agent, rel);
    if (typeof buf === 'string') { reason ??= buf; continue; }
    const maps = keyMaps(p, rank, new Map());
    const per = p.buffersPerCta;
    for (let k = 0; k < maps.buf.length; k++) maps.buf[k] = maps.cta[Math.floor(k / per)]! * per + buf[k % per]!;
    if (!groupsMap(an, agent, maps.buf)) { reason ??= 'the warp symmetry groups of two CTAs differ'; continue; }
    perms.push({ rank, agent, ...maps });
  }
  return { perms, reason: perms.length ? null : reason };
}
