/// <reference lib="dom" />
/**
 * The Timeline tab's summary of the run: the verdict with cycles, events and agents (or, in a
 * counterexample replay, which hazard and how many steps), the simulator's diagnostics (each with
 * a button that moves the cursor to it and what an H200 does) and a hang's blocked waiters with
 * their reasons and wait-for cycle (waiters blocked the same way are one entry, hang-groups.ts).
 * A run that stopped at a served PTX kernel's missing parameter shows that note
 * (missing-param-note.ts) in place of the trap's diagnostic.
 */
import type { Hazard } from '../check/check.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { fmt, h } from './dom.js';
import { waiterGroups } from '../report/hang-groups.js';
import type { RunModel } from './model.js';

/**
 * The run summary's elements. `replay`: the hazard being replayed (null: the simulation).
 * `stop`: a missing-parameter stop of the simulation, its diagnostic and the note shown for it.
 */
export function runInfoParts(m: RunModel, replay: { index: number; hazard: Hazard } | null, onBack: () => void, onJump: (t: number) => void,
  stop: { diag: Diagnostic; note: HTMLElement } | null = null): HTMLElement[] {
  const sim = m.sim;
  const parts: HTMLElement[] = [];
  if (m.trace && replay) {
    const back = h('button', { type: 'button', 'aria-label': 'back to the simulation' }, 'Back to the simulation');
    back.addEventListener('click', () => onBack());
    parts.push(h('p', { class: 'run-verdict v-hang' }, `Counterexample ${replay.index + 1}: ${replay.hazard.kind}${replay.hazard.subject ? ` on ${replay.hazard.subject.name}` : ''}`,
      ` — the checker's schedule, ${m.trace.steps} steps replayed through the machine; the time axis counts steps, not cycles. `, back));
  } else if (stop && !m.trace) parts.push(stop.note);
  else parts.push(h('p', { class: `run-verdict v-${sim.verdict}` }, `verdict: ${sim.verdict}`, ` — ${fmt(sim.cycles)} cycles, ${fmt(m.events.length)} events, ${m.program.agents.length} agents, simulated in ${m.simMs.toFixed(0)} ms${sim.stopped ? ` (${sim.stopped})` : ''}`));
  const diags = stop && !m.trace ? sim.diagnostics.filter((d) => d.diag !== stop.diag) : sim.diagnostics;
  if (diags.length) {
    const ul = h('ul', { class: 'diags', 'aria-label': 'diagnostics' });
    for (const d of diags.slice(0, 12)) {
      const b = h('button', { type: 'button', class: 'link', title: 'move the cursor here' }, `t=${fmt(d.t)}`);
      b.addEventListener('click', () => onJump(d.t));
      ul.appendChild(h('li', { class: `sev-${d.diag.severity}` }, b, ` ${d.diag.severity} [${d.diag.code}] ${d.diag.message}`, d.loc ? ` (line ${d.loc.line}${d.loc.origin ? `, ${d.loc.origin}` : ''})` : '', h('br', {}), h('span', { class: 'h200' }, `H200: ${d.diag.h200}`)));
    }
    parts.push(ul);
  }
  if (sim.hang) {
    const ul = h('ul', { class: 'hang', 'aria-label': 'hang report' });
    for (const g of waiterGroups(sim.hang.waiters)) ul.appendChild(h('li', {}, `${g.label} blocked in ${g.op} (line ${g.line}${g.origin ? `, ${g.origin}` : ''})`, ...g.reasons.map((r) => h('div', { class: 'reason' }, r))));
    parts.push(h('div', {}, h('p', { class: 'hang-head' }, 'Hang: nothing can progress.'), ul, sim.hang.cycle ? h('p', {}, `wait-for cycle: ${sim.hang.cycle.join(' → ')}`) : ''));
  }
  return parts;
}
