/**
 * The tcgen05 thread-synchronization fences (PTX ISA §9.7.16.6.3, §9.7.16.6.4, §9.7.16.11.1), as a
 * static rule over each role's code (docs/CHECK.md, "tcgen05 fences"):
 *
 * - after a thread synchronization that acquires another thread's tcgen05 work (a wait on a
 *   barrier some `tcgen05.commit` signals or some tcgen05-issuing role arrives on; a `bar.sync` or
 *   `barrier.cluster.wait` shared with a tcgen05-issuing role), a tcgen05 operation that touches
 *   Tensor Memory needs `tcgen05.fence::after_thread_sync` in between: without it the ISA does not
 *   order it after the other side's tcgen05 operations;
 * - before a thread synchronization that releases to such a role (an arrive on a barrier it waits
 *   on, a `bar.sync` / `bar.arrive` / `barrier.cluster.arrive` shared with it), this role's earlier
 *   `tcgen05.ld` / `st` / `cp` / `shift` / `alloc` / `dealloc` need `tcgen05.fence::before_thread_sync`
 *   (`tcgen05.commit` implies it, §9.7.16.6.2.1).
 *
 * Both are `missing-fence` warnings under `--strict`: CUTLASS relies on commit and mbarrier waits
 * alone, so they never set the verdict. tcgen05 has no hardware here: the rule is the ISA's.
 */
import type { Op, SrcLoc } from '../kernel/ir.js';
import type { Instr, Program } from '../machine/program.js';
import type { RawHazard } from './engine.js';

/** tcgen05 operations that access Tensor Memory (they need the after fence past a sync). */
const TMEM_USE = new Set<Op['op']>(['tcgen05.mma', 'tcgen05.ld', 'tcgen05.ld.async', 'tcgen05.st', 'tcgen05.cp', 'tcgen05.shift', 'tcgen05.dealloc']);
/** tcgen05 operations a later release must fence (commit carries its own before fence). */
const BEFORE_NEEDED = new Set<Op['op']>(['tcgen05.ld', 'tcgen05.ld.async', 'tcgen05.st', 'tcgen05.cp', 'tcgen05.shift', 'tcgen05.alloc', 'tcgen05.dealloc']);

type Sync = { kind: 'mbar' | 'named' | 'cluster'; name: string };

function acquireOf(op: Op): Sync | null {
  if (op.op === 'mbarrier.wait') return { kind: 'mbar', name: op.bar.name };
  if (op.op === 'bar.sync') return { kind: 'named', name: '' };
  if (op.op === 'barrier.cluster.wait') return { kind: 'cluster', name: '' };
  return null;
}

function releaseOf(op: Op): Sync | null {
  if (op.op === 'mbarrier.arrive') return { kind: 'mbar', name: op.bar.name };
  if (op.op === 'bar.sync' || op.op === 'bar.arrive') return { kind: 'named', name: '' };
  if (op.op === 'barrier.cluster.arrive') return { kind: 'cluster', name: '' };
  return null;
}

/** Successor pcs of instruction `pc`. */
function succs(code: Instr[], pc: number): number[] {
  const ins = code[pc]!;
  if (ins.i === 'end') return [];
  if (ins.i === 'jmp') return [ins.to];
  if (ins.i === 'jz') return [pc + 1, ins.to];
  return [pc + 1];
}

/**
 * May-analysis over one role's code: at each pc, the pcs of the syncs (`gen` true at them) not yet
 * followed by a `kill` instruction on some path.
 */
function reaching(code: Instr[], gen: (pc: number) => boolean, kill: (pc: number) => boolean): Set<number>[] {
  const at: Set<number>[] = code.map(() => new Set());
  const work = [0];
  const seen = new Set<number>();
  while (work.length) {
    const pc = work.pop()!;
    const outSet = new Set(at[pc]);
    if (kill(pc)) outSet.clear();
    if (gen(pc)) outSet.add(pc);
    for (const n of succs(code, pc)) {
      const t = at[n]!;
      let grew = !seen.has(n);
      for (const v of outSet) if (!t.has(v)) (t.add(v), (grew = true));
      seen.add(n);
      if (grew) work.push(n);
    }
  }
  return at;
}

/** The `missing-fence` warnings of the tcgen05 fence rule for `p` (see the module comment). */
export function tcFenceChecks(p: Program): RawHazard[] {
  const roles = p.roles;
  const opsOf = (r: number) => roles[r]!.code.filter((x): x is Extract<Instr, { i: 'op' }> => x.i === 'op').map((x) => x.op);
  const tcRole = roles.map((_, r) => opsOf(r).some((o) => TMEM_USE.has(o.op) || BEFORE_NEEDED.has(o.op)));
  if (!tcRole.some(Boolean)) return [];
  const committed = new Set<string>();
  for (let r = 0; r < roles.length; r++) for (const o of opsOf(r)) if (o.op === 'tcgen05.commit') committed.add(o.bar.name);
  // Whether another tcgen05 role (this one too when it has several warps) takes part in sync `s` from the other side.
  const partner = (r: number, s: Sync, side: 'acquire' | 'release'): boolean => {
    if (side === 'acquire' && s.kind === 'mbar' && committed.has(s.name)) return true;
    return roles.some((_, o) => {
      if (!tcRole[o] || (o === r && roles[r]!.warps < 2)) return false;
      return opsOf(o).some((x) => {
        const y = side === 'acquire' ? releaseOf(x) : acquireOf(x);
        return y !== null && y.kind === s.kind && y.name === s.name;
      });
    });
  };
  const out: RawHazard[] = [];
  const warn = (kind: 'after' | 'before', subject: string, message: string, locs: SrcLoc[]) =>
    out.push({
      kind: 'missing-fence', severity: 'warning', key: `${subject}|${locs[0]!.line}:${locs[0]!.col}|tc${kind}`, message, subject, state: 0, extra: [], locs,
      details: [`PTX ISA §9.7.16.6.3, §9.7.16.6.4, §9.7.16.11.1: tcgen05.fence::${kind}_thread_sync orders tcgen05 operations ${kind === 'after' ? 'after the preceding' : 'before the following'} thread synchronization; CUTLASS omits it, so this is a warning (--strict).`],
    });
  roles.forEach((rc, r) => {
    const code = rc.code;
    const op = (pc: number) => { const x = code[pc]!; return x.i === 'op' ? x : null; };
    const after = reaching(code, (pc) => { const x = op(pc); const s = x && acquireOf(x.op); return !!s && partner(r, s, 'acquire'); }, (pc) => op(pc)?.op.op === 'tcgen05.fence::after_thread_sync');
    const before = reaching(code, (pc) => BEFORE_NEEDED.has(op(pc)?.op.op as Op['op']), (pc) => op(pc)?.op.op === 'tcgen05.fence::before_thread_sync' || op(pc)?.op.op === 'tcgen05.commit');
    code.forEach((ins, pc) => {
      if (ins.i !== 'op') return;
      if (TMEM_USE.has(ins.op.op) && after[pc]!.size) {
        const sync = op([...after[pc]!][0]!)!;
        const subject = 'acc' in ins.op ? ins.op.acc.name : (ins.buf ? refName(ins.op) : ins.op.op);
        warn('after', subject, `${ins.text} in ${rc.name} follows ${sync.text} (line ${sync.loc.line}) with no tcgen05.fence::after_thread_sync in between: it is not ordered after the tcgen05 operations the other side released`, [ins.loc, sync.loc]);
      }
      const rel = releaseOf(ins.op);
      if (rel && before[pc]!.size && partner(r, rel, 'release')) {
        const tc = op([...before[pc]!][0]!)!;
        warn('before', refName(tc.op), `${ins.text} in ${rc.name} follows ${tc.text} (line ${tc.loc.line}) with no tcgen05.fence::before_thread_sync in between: the other side's tcgen05 operations after its sync are not ordered after it`, [ins.loc, tc.loc]);
      }
    });
  });
  return out;
}

/** The TMEM buffer an operation names, or its mnemonic. */
function refName(op: Op): string {
  const o = op as { buf?: { name: string }; src?: { name: string }; dst?: { name: string }; acc?: { name: string } };
  return (o.acc ?? o.buf ?? o.dst ?? o.src)?.name ?? op.op;
}
