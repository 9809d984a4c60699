/**
 * Whether mbsim recognizes an instruction's mnemonic at all: the base opcodes of the PTX ISA 9.0
 * (§9.7), and for `mbarrier` its operations (§9.7.13.15). The parser takes any opcode (ast.ts);
 * one outside these is most likely a typo ptxas rejects (`mbarrier.try_wiat.parity`), which
 * `info`, `check` and `run` warn about at its place, and whose trap says mbsim does not know it.
 */
import type { Instruction } from '../ptx/ast.js';

const BASES = new Set(`abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev brkpt brx
call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div dp2a dp4a elect ex2 exit fence fma fns
getctarank griddepcontrol isspacep istypeof ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov
movmatrix mul mul24 multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt sad selp set
setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix sub subc suld suq sured sust szext tanh tcgen05
tensormap testp tex tld4 trap txq vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2
vmin4 vote vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor`.split(/\s+/));

const MBARRIER = new Set(['init', 'inval', 'arrive', 'arrive_drop', 'expect_tx', 'complete_tx', 'test_wait', 'try_wait', 'pending_count']);

/** The unknown part of `ins`'s mnemonic (`mbarrier.try_wiat`), or undefined when mbsim recognizes it. */
export function unknownMnemonic(ins: Pick<Instruction, 'base' | 'mods'>): string | undefined {
  if (!BASES.has(ins.base)) return ins.base;
  if (ins.base === 'mbarrier' && !MBARRIER.has(ins.mods[0] ?? '')) return `mbarrier${ins.mods[0] !== undefined ? `.${ins.mods[0]}` : ''}`;
  return undefined;
}
