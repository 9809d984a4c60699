/**
 * Dead frame slots of the warps warp-relative.ts leaves unanalysed (docs/CHECK.md, "Dead
 * registers"): for an agent of a role run as written (PTX) whose value-set fixpoint gave up (a role
 * past MAX_FIXPOINT_VISITS / MAX_FIXPOINT_WORK or MAX_NODES, or a program past MAX_KNOWN_ENTRIES),
 * the plain backward liveness of warp-flow.ts `liveness` still completes: one bit per slot and pc,
 * a fixpoint over the flat code whose every pass costs O(code × slots / 32) words. Per position
 * where the agent can rest (an operation or `end`), the record hash and the stored encoding read
 * only the slots live there (operands, `dest` and `token` included); a slot not live there is never
 * read before a `set` writes it, on any path (a trap included: a trap reads its own operands), so
 * states that differ only in such slots are one state, and decoding restores them as 0. Each lane of
 * a lane-varying register is a slot of its own (ptxi), so a dead lane's copy is left out alike.
 *
 * The builtins (`cta`, `instance`, …, `warp`, `warpgroup`) are never written unless the code assigns
 * one: not live, they are restored from the agent's initial frame (`known`); where the code assigns
 * one, every builtin is kept at every position. A role with a `set` / `jz` without its expression
 * (a loop with a step, which no PTX translation emits) gets no facts. The live lists are shared by
 * the warps of a role, the known frame by the positions of a warp: O(rest positions × live slots)
 * words per role.
 */
import { BUILTINS, type AgentInfo, type Program, type RoleCode } from '../machine/program.js';
import { context, initialFrame, type Bits } from './warp-flow.js';

/**
 * What the checker's encoding reads of an agent's frame (Analysis.rel): per pc where it rests, the
 * slots kept (`live`, ascending) and the frame the others are restored from (`known`); per `jz`, the
 * edges its warp can take (`taken`, for settled.ts; absent: both). Slots at or past `knownUpTo`
 * that are not kept are dead (restored as 0, never compared); absent: every slot not kept and not
 * in `dead` is known (warp-relative.ts).
 */
export interface SlotFacts {
  live: (Int32Array | undefined)[];
  known: (number[] | undefined)[];
  dead?: (Int32Array | undefined)[];
  taken?: Uint8Array;
  knownUpTo?: number;
}

/** Per role: the live slots of each rest position (shared by its warps), or null (no expressions). */
const liveCache = new WeakMap<RoleCode, { params: Program['params']; live: (Int32Array | undefined)[] | null }>();

function restLive(p: Program, rc: RoleCode): (Int32Array | undefined)[] | null {
  const hit = liveCache.get(rc);
  if (hit && hit.params === p.params) return hit.live;
  let out: (Int32Array | undefined)[] | null = null;
  if (!rc.code.some((ins) => (ins.i === 'set' || ins.i === 'jz') && !ins.src)) {
    const bits: Bits[] = context(p, rc).live;
    const nb = BUILTINS.length;
    // A builtin assigned: every builtin is kept (its value no longer follows from the agent).
    const assigned = rc.code.some((ins) => (ins.i === 'set' && ins.slot < nb) || (ins.i === 'op' && ((ins.dest ?? nb) < nb || (ins.token ?? nb) < nb)));
    out = new Array(rc.code.length);
    const n = rc.slots.length;
    const scratch = new Int32Array(n);
    rc.code.forEach((ins, pc) => {
      if (ins.i !== 'op' && ins.i !== 'end') return;
      const b = bits[pc]!;
      let k = 0;
      for (let j = 0; j < n; j++) if ((assigned && j < nb) || ((b[j >> 5]! >>> (j & 31)) & 1) === 1) scratch[k++] = j;
      out![pc] = scratch.slice(0, k);
    });
  }
  liveCache.set(rc, { params: p.params, live: out });
  return out;
}

/**
 * The dead-slot facts of agent `a` of role `rc` (see the module comment), or null when the role's
 * code has a `set` / `jz` without its expression. Positions the agent cannot rest at have no entry.
 */
export function deadSlotFacts(p: Program, rc: RoleCode, a: AgentInfo): SlotFacts | null {
  const live = restLive(p, rc);
  if (!live) return null;
  const frame = initialFrame(p, rc, a).map((s) => (s ? s[0]! : 0));
  const known: (number[] | undefined)[] = new Array(rc.code.length);
  for (let pc = 0; pc < live.length; pc++) if (live[pc]) known[pc] = frame;
  return { live, known, knownUpTo: BUILTINS.length };
}
