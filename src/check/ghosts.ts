/**
 * Ghost records the hazard detectors keep in `Extra.ghosts` (part of the state's hash): the
 * accesses of finished-but-unordered asynchronous operations and elected-thread waits, and the
 * small list functions that keep them canonical (sorted, without duplicates).
 */
import type { AsyncOp } from '../machine/machine.js';
import { accessesOf, asyncDef } from '../machine/ops/index.js';

/** Inserts the pair (a, b) into a list of pairs sorted by (a, b), unless present; mutates and returns `l`. */
export function insertPair(l: number[], a: number, b: number): number[] {
  let i = 0;
  while (i < l.length && (l[i]! < a || (l[i] === a && l[i + 1]! < b))) i += 2;
  if (i < l.length && l[i] === a && l[i + 1] === b) return l;
  // In place (splice would allocate the array of removed elements).
  l.push(0, 0);
  for (let j = l.length - 1; j >= i + 2; j--) l[j] = l[j - 2]!;
  l[i] = a;
  l[i + 1] = b;
  return l;
}

/** Inserts `v` into the sorted list `l` unless present; mutates `l`. */
export function insertSorted(l: number[], v: number): void {
  let i = l.length;
  while (i > 0 && l[i - 1]! > v) i--;
  if (i > 0 && l[i - 1] === v) return;
  l.push(v);
  for (let j = l.length - 1; j > i; j--) l[j] = l[j - 1]!;
  l[i] = v;
}

/**
 * Whether the list `l` of accesses (buffer·2 + write) holds one of the same mode as `v` on bytes
 * that overlap `v`'s buffer (`conf`: the program's key overlap); null holds none.
 */
export function hasAccess(l: readonly number[] | null | undefined, v: number, conf: (a: number, b: number) => boolean): boolean {
  if (!l) return false;
  for (let i = 0; i < l.length; i++) {
    const w = l[i]!;
    if (w === v || ((w & 1) === (v & 1) && conf(w >> 1, v >> 1))) return true;
  }
  return false;
}

/** Buffers an in-flight op accesses, with the mode (its kind's module, {@link accessesOf}). */
export function opAccesses(o: AsyncOp): { buf: number; rw: 'r' | 'w' }[] {
  return accessesOf(o);
}

/**
 * Tags of the elected-thread ghosts kept in `Extra.ghosts` next to the tcgen05.mma ghosts (B18): in
 * a role of more than one warp, the accesses of a completed bulk store or wgmma of the agent stay
 * recorded until a wait_group retires them. A wait_group of all threads drops them; one executed by
 * the elected thread alone (inside `elect:` or `per=one`) orders only that thread, so they stay,
 * marked {@link EG_ELECT}, until the role's threads synchronize (bar.sync, barrier.cluster.wait).
 * Value: EG | kind bit | elect bit | (buffer·2 + write). Likewise an mbarrier wait passed by the
 * elected thread alone: EG | EG_ELECT | EG_MB | barrier key, until the role synchronizes or all its
 * threads wait on that barrier; the role's other threads then touching a buffer that TMA copies
 * completing on that barrier fill is a race.
 */
export const EG = 1 << 28;
export const EG_ELECT = 1 << 27;
export const EG_WG = 1 << 26;
export const EG_MB = 1 << 25;
export const EG_ACC = (1 << 25) - 1;

export const kindLabel = (k: AsyncOp['kind']): string => asyncDef(k).label;
