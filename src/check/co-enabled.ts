/**
 * Hazard detector on states: co-enabled conflicting generic accesses (`race`). Two agents whose
 * next operations are generic accesses (ld.shared, st.shared, tcgen05.ld: the operations whose
 * module declares an `access`) to the same buffer, at least one a write, are both enabled in the
 * state, so either may go first. It observes states only and keeps no extra state (nothing in
 * `Extra`): the verdict depends on the state, not on the path that reached it.
 */
import type { Choice, MachineState } from '../machine/machine.js';
import { pointAccess } from '../machine/ops/index.js';
import { sliceShared, type Instr, type OpInstr, type Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import { clusterResident } from '../machine/values.js';
import { keyOf, type RawHazard } from './engine.js';

const locKey = (l?: SrcLoc) => (l ? `${l.file ?? ''}:${l.line}:${l.col}` : '-');

/**
 * The detector for program `p` (`agentCode`: each agent's role code): called with a state `s`
 * reached from stored state `id` by `prefix`, it passes every race found to `found`. The agents
 * whose next operation is a generic access are enabled exactly when they run and their cluster is
 * resident (`resident=`, machine/values.ts), so it scans the agents directly (in index order, as
 * `Machine.enabled` lists them).
 */
export function coEnabledDetector(
  p: Program, agentCode: Instr[][], found: (h: RawHazard) => void,
): (s: MachineState, id: number, prefix: Choice[]) => void {
  const agentName = (a: number) => p.agents[a]!.name;
  // Residency gates whole clusters: an agent of a cluster not resident yet is not enabled.
  const clusterAgents: number[][] | null = p.resident < p.grid ? Array.from({ length: p.grid }, () => []) : null;
  if (clusterAgents) for (const info of p.agents) clusterAgents[info.cluster]!.push(info.id);
  return (s, id, prefix) => {
    if (s.trapped) return;
    let acc: { a: number; buf: number; rw: 'r' | 'w'; ins: OpInstr }[] | null = null;
    const ags = s.agents;
    for (let a = 0; a < ags.length; a++) {
      const ag = ags[a]!;
      if (ag.status !== 'run') continue;
      const ins = agentCode[a]![ag.pc]!;
      if (ins.i !== 'op') continue;
      const rw = pointAccess(ins.opc);
      if (rw === undefined) continue;
      if (clusterAgents && !clusterResident(s, p.agents[a]!.cluster, p.resident, clusterAgents)) continue;
      const buf = keyOf(ins.buf!, ag.frame);
      if (buf < 0) continue;
      (acc ??= []).push({ a, buf, rw, ins });
    }
    if (!acc || acc.length < 2) return;
    for (let i = 0; i < acc.length; i++) for (let j = i + 1; j < acc.length; j++) {
      const x = acc[i]!;
      const y = acc[j]!;
      if ((x.buf !== y.buf && !p.buffersOverlap(x.buf, y.buf)) || (x.rw === 'r' && y.rw === 'r')) continue;
      if (x.ins === y.ins && sliceShared(p, x.a, y.a, x.ins.op)) continue; // each warp its own slice
      const w = x.rw === 'w' ? x : y;
      const o = w === x ? y : x;
      // The subject must not depend on which access is the writer: the lower key names it.
      const rb = Math.min(x.buf, y.buf);
      const bufName = p.bufferName(w.buf);
      found({
        kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(w.ins.loc)}|${locKey(o.ins.loc)}`,
        message: `${agentName(w.a)} writes ${bufName} (${w.ins.text}) and ${agentName(o.a)} ${o.rw === 'w' ? 'writes' : 'reads'} ${o.buf === w.buf ? 'it' : `${p.bufferName(o.buf)}, whose bytes overlap it`} (${o.ins.text}) with nothing ordering them: both are enabled in the same state, so either may go first`,
        subject: p.bufferName(rb), state: id, extra: [...prefix, { kind: 'agent', agent: w.a }, { kind: 'agent', agent: o.a }], details: [], locs: [w.ins.loc, o.ins.loc],
      });
    }
  };
}
