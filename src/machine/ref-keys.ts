/**
 * A role's barrier and buffer references compiled to key functions (compile-role.ts): a frame to
 * the flat key of the element the reference names (`name[index]@cta`, the executing CTA's rank by
 * default; a `gmem` array has one location per launch), or -1 when its index or CTA rank is out
 * of range at run time, with the explanation the machine's fault quotes (`describe`). A buffer
 * reference to a ranged or one-CTA allocation resolves to its byte range's key (views.ts
 * `rangedKey`). An unknown name or a literal index out of range is a {@link KernelError}.
 */
import { showExpr, type CompiledExpr } from '../kernel/expr.js';
import type { BarRef, BufRef, Expr, SrcLoc } from '../kernel/ir.js';
import { rangedKey, type BufferSpace } from './views.js';
import { KernelError, type BarrierInfo, type BufferInfo, type KeyFn } from './program.js';
import type { RoleFrame } from './role-frame.js';

/** The key functions of a role's references: barriers (`barKey`) and buffers (`bufKey`, with the operation's byte count). */
export interface RefKeys {
  barKey(ref: BarRef, loc: SrcLoc): KeyFn;
  /** Key function of a buffer reference; `bytes`: the operation's byte count (the range's length). */
  bufKey(ref: BufRef, loc: SrcLoc, bytes?: Expr): KeyFn;
}

/** The key functions of references compiled over `frame`, for the arrays laid out in `barByName` / `bufByName`. */
export function refKeys(
  frame: RoleFrame,
  clusterSize: number,
  barByName: Map<string, BarrierInfo>,
  bufByName: Map<string, BufferInfo>,
  barriersPerCta: number,
  space: BufferSpace,
): RefKeys {
  const cx = frame.cx;
  const ctaOf = (ref: { cta?: Expr }, loc: SrcLoc): CompiledExpr | null => (ref.cta ? cx(ref.cta, loc) : null);
  /** Key function of a barrier or buffer reference: flat key, or -1 when out of range at run time. */
  const refKey = (what: 'barrier' | 'buffer', ref: BarRef | BufRef, loc: SrcLoc): KeyFn => {
    const [own, other, perCta] = what === 'barrier' ? [barByName, bufByName, barriersPerCta] as const : [bufByName, barByName, space.perCta] as const;
    const info = own.get(ref.name);
    if (!info) {
      const hint = other.has(ref.name) ? ` ('${ref.name}' is a ${what === 'barrier' ? 'buffer' : 'barrier'})` : '';
      throw new KernelError(`unknown ${what} '${ref.name}'${hint}`, loc, `unknown-${what}`);
    }
    const idx = cx(ref.index, loc);
    const cta = ctaOf(ref, loc);
    if (ref.index.k === 'num' && (ref.index.v < 0 || ref.index.v >= info.length)) {
      throw new KernelError(`index ${ref.index.v} is out of range for ${what} array ${info.name}[${info.length}]`, loc, 'index-range');
    }
    const len = info.length;
    const o = info.offset;
    const global = (info as BufferInfo).space === 'gmem'; // one location per launch: CTA 0's key block
    const fn: KeyFn = (f) => {
      const i = idx(f);
      const rank = cta ? cta(f) : f[0]!;
      if (i < 0 || i >= len || rank < 0 || rank >= clusterSize) return -1;
      return global ? o + i : (f[3]! * clusterSize + rank) * perCta + o + i;
    };
    fn.describe = (f) => {
      const i = idx(f);
      const rank = cta ? cta(f) : f[0]!;
      const parts: string[] = [];
      if (i < 0 || i >= len) parts.push(`index ${ref.index.k === 'num' ? '' : `${showExpr(ref.index)} = `}${i} is outside ${info.name}[${len}] (0..${len - 1})`);
      if (rank < 0 || rank >= clusterSize) parts.push(`CTA rank ${ref.cta ? `${showExpr(ref.cta)} = ` : ''}${rank} is outside the cluster of ${clusterSize} (0..${clusterSize - 1})`);
      return parts.join('; ') || 'in range';
    };
    return fn;
  };
  const barKey = (ref: BarRef, loc: SrcLoc): KeyFn => refKey('barrier', ref, loc);
  const bufKey = (ref: BufRef, loc: SrcLoc, bytes?: Expr): KeyFn => {
    const whole = refKey('buffer', ref, loc);
    const info = bufByName.get(ref.name)!;
    if (!info.ranged && info.ctaOnly < 0) return whole;
    return rangedKey(ref, info, whole, ref.offset ? cx(ref.offset, loc) : null, info.ranged && bytes ? cx(bytes, loc) : null, space, clusterSize);
  };
  return { barKey, bufKey };
}
