/**
 * Settled reads, a forced step of the partial-order reduction for the warps of roles run as
 * written (PTX; docs/CHECK.md "Settled reads"): an `ld.shared` of a shared-memory buffer whose
 * allocation nothing can access any more except by generic reads is taken alone.
 *
 * Such a read commutes with every step the others can take: it is always enabled, it changes
 * nothing but its own agent's position and checker records (no barrier, no memory cell: kernels
 * with values are excluded), it enables or disables no other step, and the only hazards it can be
 * part of are with writes that already happened: no operation in flight touches the allocation
 * (excluded), and its ghosts of finished writes only retire later, so the read taken now meets
 * every ghost a later read would meet. The proxy findings (missing-fence, the strict cross-proxy
 * race) depend on the order of a generic access and another agent's async-proxy issue on the same
 * allocation: none can come any more, and the reader's own later issues follow it in program order
 * whenever it is taken. Kernels that track relaxed arrives (relaxed.ts) are left to the full search.
 */
import type { MachineState } from '../machine/machine.js';
import type { Instr, OpInstr, Program } from '../machine/program.js';
import { keyOf } from './engine.js';
import type { SearchCtx } from './search-ctx.js';

/** The buffer arrays an operation names (its destination, source, buffer, accumulator and reads). */
function bufNames(op: object): string[] {
  const o = op as Record<string, unknown>;
  const out: string[] = [];
  for (const k of ['dst', 'src', 'buf', 'acc']) {
    const v = o[k] as { name?: unknown } | undefined;
    if (v && typeof v === 'object' && typeof v.name === 'string') out.push(v.name);
  }
  if (Array.isArray(o.reads)) for (const r of o.reads as { name: string }[]) out.push(r.name);
  return out;
}

/**
 * Per pc of `code`: the allocations (bit i of word i >> 5) the code from that pc on can access by
 * anything but `ld.shared` (a backward fixpoint over the flat code's edges; `taken`: per `jz`, the
 * edges one warp can take, warp-relative.ts `WarpRelative.taken`; absent: both).
 */
export function futureAccess(p: Program, code: readonly Instr[], taken?: Uint8Array): Uint32Array[] {
  const words = (p.buffers.length + 31) >> 5;
  const allocOf = new Map(p.buffers.map((b) => [b.name, b.alloc]));
  const own = code.map((ins) => {
    const m = new Uint32Array(words);
    if (ins.i === 'op' && ins.op.op !== 'ld.shared') for (const n of bufNames(ins.op)) {
      const al = allocOf.get(n);
      if (al !== undefined) m[al >> 5]! |= 1 << (al & 31);
    }
    return m;
  });
  const at = own.map((m) => m.slice());
  for (let changed = true; changed;) {
    changed = false;
    for (let pc = code.length - 1; pc >= 0; pc--) {
      const ins = code[pc]!;
      const t = taken ? taken[pc]! : 3;
      const succ = ins.i === 'end' ? [] : ins.i === 'jmp' ? [ins.to] : ins.i === 'jz' ? [...(t & 1 ? [pc + 1] : []), ...(t & 2 ? [ins.to] : [])] : [pc + 1];
      for (const q of succ) {
        const from = at[q];
        if (!from) continue;
        for (let w = 0; w < words; w++) {
          const x = at[pc]![w]! | from[w]!;
          if (x !== at[pc]![w]) {
            at[pc]![w] = x;
            changed = true;
          }
        }
      }
    }
  }
  return at;
}

/** The settled-read test of search `ctx` (see the module comment), or null where the rule never applies. */
export function settledReads(ctx: SearchCtx): ((s: MachineState, a: number, ins: OpInstr) => boolean) | null {
  const { p, an } = ctx;
  if (p.values || an.trackRelaxed || !p.roles.some((rc) => rc.decl.asWritten && rc.split)) return null;
  // Per agent: from the edges its warp can take where warp-relative.ts analysed it, else the role's.
  const byRole = p.roles.map((rc) => (rc.decl.asWritten ? futureAccess(p, rc.code) : null));
  const future = p.agents.map((info) => {
    const rel = an.rel[info.id];
    return rel?.taken && byRole[info.role] ? futureAccess(p, p.roles[info.role]!.code, rel.taken) : byRole[info.role]!;
  });
  const space = p.bufferSpace;
  const perCta = p.buffersPerCta;
  const allocOfKey = (key: number) => space.alloc[key % perCta]!;
  return (s, a, ins) => {
    const info = p.agents[a]!;
    if (!future[info.id] || ctx.f.multiWarp[a] || !ins.buf) return false;
    const key = keyOf(ins.buf, s.agents[a]!.frame);
    if (key < 0 || Math.floor(key / perCta) !== info.cta) return false;
    const al = allocOfKey(key);
    if (p.buffers[al]!.space !== 'smem') return false;
    for (const o of s.inflight) {
      if (o.buf >= 0 && allocOfKey(o.buf) === al) return false;
      if (o.reads) for (const r of o.reads) if (r >= 0 && allocOfKey(r) === al) return false;
    }
    for (let b = 0; b < s.agents.length; b++) {
      const ag = s.agents[b]!;
      if (b === a || ag.status === 'done') continue;
      const f = future[b];
      // An agent of a role not run as written: whatever it may still do, it is not known here.
      if (!f) return false;
      if ((f[ag.pc]![al >> 5]! >>> (al & 31)) & 1) return false;
    }
    return true;
  };
}
