/**
 * The tcgen05 instructions (PTX ISA §9.7.16) mapped onto the machine's operations (kernel/ir.ts,
 * machine/ops/tcgen05.ts and tmem.ts): `alloc` / `dealloc` / `relinquish_alloc_permit`, `mma`
 * (its shared-memory descriptors followed back to the stage buffers they address, as wgmma's),
 * `commit` (with `.multicast::cluster`), `ld` / `st` and their waits, `cp`, `shift` and the two
 * fences. Tensor Memory is one IR buffer, `tmem`, allocated by the kernel's one `tcgen05.alloc`
 * site with that site's column count: the TMEM addresses themselves (read back from shared
 * memory) are opaque, every tcgen05 operation names that allocation.
 */
import type { BufRef, Expr, MmaShape, Op, SrcLoc, Stmt } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import { num, NotModelled, once, value } from './emit.js';
import type { FlatIns } from './flat.js';
import type { InsEnv } from './insn.js';

/** Name of the IR buffer that stands for the kernel's Tensor Memory allocation. */
export const TMEM = 'tmem';

/** `{ name: 'tmem', index: 0 }`. */
const acc: BufRef = { name: TMEM, index: num(0) };

/**
 * The shape an MMA instruction descriptor encodes (PTX ISA §9.7.16.4.2, instruction descriptor:
 * bits 17-22 N >> 3, bits 24-28 M >> 4) when it is a constant; K is 16 for `kind::f16` / `tf32`
 * half-precision widths (32 for the 8-bit kinds). The shape only sets the MMA's duration.
 */
export function mmaShape(idesc: number | undefined, kind: string | undefined): MmaShape {
  const k = kind && /f8f6f4|i8|mxf8f6f4/.test(kind) ? 32 : 16;
  if (idesc === undefined) return { m: 128, n: 128, k };
  const n = ((idesc >>> 17) & 0x3f) << 3;
  const m = ((idesc >>> 24) & 0x1f) << 4;
  return { m: m || 128, n: n || 128, k };
}

/** `{ pair: true }` for an instruction with `.cta_group::2`. */
const pair = (mods: readonly string[]): { pair?: true } => (mods.includes('cta_group::2') ? { pair: true } : {});

/** Statements of a `tcgen05.*` instruction. */
export function tcgen05Stmts(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard: Expr | undefined): Stmt[] {
  const ins = it.ins;
  const m0 = ins.mods[0] ?? '';
  const ops = ins.operands;
  const one = (op: Op) => once(op, loc, divergent, guard);
  switch (m0) {
    // `.cta_group::2`: the CTA pair allocates together (the machine's pair operations).
    case 'alloc': env.tmem(it, ops[1]); return one({ op: 'tcgen05.alloc', buf: acc, ...pair(ins.mods) });
    case 'dealloc': env.tmem(it); return one({ op: 'tcgen05.dealloc', buf: acc, ...pair(ins.mods) });
    case 'relinquish_alloc_permit': return one({ op: 'tcgen05.relinquish_alloc_permit', ...pair(ins.mods) });
    case 'fence::before_thread_sync': return one({ op: 'tcgen05.fence::before_thread_sync' });
    case 'fence::after_thread_sync': return one({ op: 'tcgen05.fence::after_thread_sync' });
    case 'wait::ld': return one({ op: 'tcgen05.wait::ld' });
    case 'wait::st': return one({ op: 'tcgen05.wait::st' });
    case 'ld': env.tmem(it); return one({ op: 'tcgen05.ld.async', src: acc });
    case 'st': env.tmem(it); return one({ op: 'tcgen05.st', dst: acc });
    case 'shift': env.tmem(it); return one({ op: 'tcgen05.shift', buf: acc });
    case 'cp': env.tmem(it); return one({ op: 'tcgen05.cp', dst: acc, src: smemOf(env, it, ops[1]!) });
    case 'mma': {
      if (ins.mods.some((x) => x === 'sp' || x.startsWith('ws') || x.startsWith('block_scale'))) throw new NotModelled(`${ins.opcode} (the .sp, .ws and block-scaled forms)`);
      env.tmem(it);
      // [d], a-desc | [a-tmem], b-desc, idesc, ...: the descriptors' shared-memory stage buffers are read.
      const reads: BufRef[] = [];
      for (const o of [ops[1], ops[2]]) if (o && o.kind === 'name') reads.push(smemOf(env, it, o));
      const shape = mmaShape(env.staticInt(it, ops[3]), ins.mods.find((x) => x.startsWith('kind::')));
      return one({ op: 'tcgen05.mma', reads, acc, shape, ...(ins.mods.includes('cta_group::2') ? { pair: true } : {}) });
    }
    case 'commit': {
      if (!ins.mods.includes('mbarrier::arrive::one')) throw new NotModelled(ins.opcode);
      const multicast = ins.mods.includes('multicast::cluster') ? { multicast: value(env, it, ops[1]!, 'lead') } : {};
      return one({ op: 'tcgen05.commit', bar: env.bar(it, ops[0]!), ...multicast });
    }
    default: throw new NotModelled(ins.opcode);
  }
}

/** The shared-memory buffer element a descriptor register (`mma`'s a-desc / b-desc, `cp`'s source) addresses. */
function smemOf(env: InsEnv, it: FlatIns, o: Operand): BufRef {
  if (o.kind !== 'name') throw new NotModelled('a shared-memory descriptor that is not a register');
  const root = env.descRoot(it, it.name(o.name));
  return env.buf(it, { kind: 'address', base: root, offset: 0n, pos: o.pos });
}
