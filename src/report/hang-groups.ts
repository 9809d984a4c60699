/**
 * A hang's blocked waiters grouped for the Timeline tab: waiters blocked in the same operation at
 * the same line for the same reasons (the warps of a warpgroup, the warpgroups of a cooperative
 * kernel) are one entry naming them all, so eight identical warps do not push the timeline below
 * the fold. The reasons come from the machine's hang analysis (`src/machine/hang.ts`), unchanged.
 */
import type { BlockedWaiter } from '../machine/hang.js';
import { runsLabel } from '../machine/warp-runs.js';

/** Waiters blocked the same way. */
export interface WaiterGroup {
  /** The waiters' names, runs of warps as ranges: `mma[0].w0–w3, mma[1].w0–w3`. */
  label: string;
  /** How many waiters the group holds (1 or more). */
  count: number;
  /** The operation they are blocked in, as source-like text. */
  op: string;
  /** Its 1-based source line. */
  line: number;
  /** The source line it was compiled from, when known (a PTX line's CUDA line: `k.cu:37`). */
  origin?: string;
  /** Why the wait cannot complete (the same sentences for every waiter of the group). */
  reasons: string[];
}

/** The waiters grouped by operation, line and reasons, in the order of each group's first waiter. */
export function waiterGroups(waiters: readonly BlockedWaiter[]): WaiterGroup[] {
  const groups = new Map<string, { names: string[]; w: BlockedWaiter }>();
  for (const w of waiters) {
    const key = JSON.stringify([w.op, w.loc.file, w.loc.line, w.reasons]);
    const g = groups.get(key);
    if (g) g.names.push(w.name);
    else groups.set(key, { names: [w.name], w });
  }
  return [...groups.values()].map(({ names, w }) => ({
    label: names.length > 1 ? `${runsLabel(names)} (${names.length} agents)` : names[0]!,
    count: names.length,
    op: w.op,
    line: w.loc.line,
    ...(w.loc.origin ? { origin: w.loc.origin } : {}),
    reasons: w.reasons,
  }));
}
