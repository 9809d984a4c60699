/// <reference lib="dom" />
/**
 * Full/empty protocol (the seed's fourth figure, for any kernel): the stages as a ring, each with its
 * full and empty barrier's phase and who holds the buffer (producer, TMA filling it, consumer),
 * following the timeline cursor. Handoffs flash when the holder changes.
 */
import type { RunModel } from '../model.js';
import { detectPair, lastHandoff, placesAt, ringIndex, stagesAt, type Holder, type RingIndex, type RolePlace, type StageState } from '../ring-model.js';
import { h, replace, s, setText } from '../dom.js';
import { cycleIndex } from '../cycle-model.js';
import { cycleView } from './cycle.js';
import { legendKey as key, legendRow } from '../legend.js';

export interface RingView {
  el: HTMLElement;
  setModel(m: RunModel | null): void;
  update(ev: number): void;
}

const HOLDER_TEXT: Record<Holder, string> = { producer: 'free: producer', tma: 'TMA filling', consumer: 'ready: consumer' };
/** Inside a stage's circle: short enough to fit. */
const HOLDER_SHORT: Record<Holder, string> = { producer: 'free', tma: 'TMA filling', consumer: 'ready' };
/** The node radius the texts are laid out for (nodes are scaled to fit the ring). */
const NODE_R = 64;

export function ringView(idp = 'ring'): RingView {
  let m: RunModel | null = null;
  let idx: RingIndex | null = null;
  let prev: Holder[] = [];
  let lastEv = -1;
  let nodes: { g: SVGGElement; circle: SVGCircleElement; holder: SVGTextElement; full: SVGTextElement; empty: SVGTextElement; x: number; y: number; a: number }[] = [];
  let geo = { cx: 240, cy: 200, R: 0, r: NODE_R };
  const sfx = idp === 'ring' ? '' : ' (replay)';
  const svg = s('svg', { class: 'ring', role: 'img', 'aria-label': `${'full/empty ring'}${sfx}`, viewBox: '0 0 480 420', width: 480, height: 420 });
  const ctaSel = h('select', { 'aria-label': `${'CTA shown in the ring'}${sfx}` });
  const ctaLabel = h('label', { hidden: true }, 'CTA ', ctaSel);
  const fullSel = h('select', { 'aria-label': `${'full barrier array'}${sfx}` });
  const emptySel = h('select', { 'aria-label': `${'empty barrier array'}${sfx}` });
  const caption = h('p', { class: 'ring-caption', id: `${idp}-caption` });
  const where = h('p', { class: 'ring-where', id: `${idp}-where`, 'aria-live': 'off' });
  const handoff = h('p', { class: 'ring-handoff', id: `${idp}-handoff`, 'aria-live': 'off' });
  const list = h('ul', { class: 'ring-list', id: `${idp}-list`, 'aria-label': idp === 'ring' ? 'stages' : 'stages in the replay' });
  const phaseKey = h('span', {});
  const legend = h('div', { class: 'legend ring-legend' },
    legendRow(null, key('h-producer', 'free: the producer may refill it'),
      key('h-tma', 'TMA filling: a copy into it is in flight'),
      key('h-consumer', 'ready: the consumer holds it')),
    legendRow(null, key(h('span', { class: 'badge b-producer' }, 'P'), 'where the producer is now'),
      key(h('span', { class: 'badge b-consumer' }, 'C'), 'where the consumer is now (red dashed outline: blocked in a wait)')),
    h('p', {}, phaseKey));
  const cycle = cycleView(idp);
  const el = h('section', { class: 'ring-view', 'aria-labelledby': `${idp}-h` },
    h('h3', { id: `${idp}-h` }, 'Full/empty protocol'),
    h('div', { class: 'controls' }, h('label', {}, 'full ', fullSel), h('label', {}, 'empty ', emptySel), ctaLabel),
    h('div', { class: 'ring-figs' }, cycle.el, h('figure', { class: 'ring-fig' }, h('figcaption', {}, 'Every stage'), svg)),
    where, handoff, caption, legend, list);
  let markers: { producer: SVGGElement; consumer: SVGGElement } | null = null;

  const marker = (cls: string, letter: string) => {
    const g = s('g', { class: `role-marker ${cls}`, visibility: 'hidden' });
    g.append(s('circle', { r: 11 }), s('text', { y: 4, 'text-anchor': 'middle' }, letter));
    svg.appendChild(g);
    return g;
  };

  const rebuild = () => {
    nodes = [];
    prev = [];
    markers = null;
    replace(svg);
    if (!m) return cycle.setPair(null, null);
    const full = fullSel.value, empty = emptySel.value || null;
    const info = m.program.barriers.find((b) => b.name === full);
    if (!info) {
      idx = null;
      cycle.setPair(null, null);
      setText(caption, 'This kernel has no barrier arrays.');
      return;
    }
    const pair = detectPair(m)!;
    const p = { ...pair, full, empty, stages: info.length };
    idx = ringIndex(m, p, Number(ctaSel.value) || 0);
    cycle.setPair(p, cycleIndex(m, idx));
    const S = p.stages;
    const one = S === 1;
    // Room between the nodes for the handoffs' text in the middle.
    const R = one ? 0 : Math.min(160, 130 + S * 6);
    // Nodes shrink (the texts with them) when the ring is crowded.
    const r = one ? NODE_R : Math.min(NODE_R, 0.44 * 2 * R * Math.sin(Math.PI / S));
    const cx = 240, cy = one ? 80 : 240;
    const hgt = one ? 240 : 480;
    geo = { cx, cy, R, r };
    svg.setAttribute('viewBox', `0 0 480 ${hgt}`);
    svg.setAttribute('height', String(hgt));
    if (!one) svg.appendChild(s('circle', { cx, cy, r: R, class: 'ring-track' }));
    // The two handoffs, in the middle of the ring (beside the node when there is one stage).
    const tx = cx, ty = one ? cy + r + 30 : cy - 22;
    const lines = [
      `${p.full}[s]: data ready`,
      `${p.producer} → ${p.consumer}`,
      p.empty ? `${p.empty}[s]: buffer free` : 'no empty array:',
      p.empty ? `${p.consumer} → ${p.producer}` : 'the buffer is never returned',
    ];
    lines.forEach((t, i) => {
      svg.appendChild(s('text', { x: tx, y: ty + i * 16 + (i >= 2 ? 8 : 0), 'text-anchor': 'middle', class: i % 2 ? 'svg-small handoff-arrow' : 'svg-tiny muted' }, t));
    });
    for (let st = 0; st < S; st++) {
      const a = -Math.PI / 2 + (2 * Math.PI * st) / S;
      const x = cx + R * Math.cos(a), y = cy + R * Math.sin(a);
      const g = s('g', { class: 'stage', transform: `translate(${x.toFixed(1)},${y.toFixed(1)}) scale(${(r / NODE_R).toFixed(3)})` });
      const circle = s('circle', { r: NODE_R, class: 'stage-node h-producer' });
      const holder = s('text', { y: -9, 'text-anchor': 'middle', class: 'svg-small' });
      const fullT = s('text', { y: 8, 'text-anchor': 'middle', class: 'svg-tiny' });
      const emptyT = s('text', { y: 24, 'text-anchor': 'middle', class: 'svg-tiny' });
      g.append(circle, s('text', { y: -27, 'text-anchor': 'middle', class: 'svg-small strong' }, `stage ${st}`), holder, fullT, emptyT);
      svg.appendChild(g);
      nodes.push({ g, circle, holder, full: fullT, empty: emptyT, x, y, a });
    }
    markers = { producer: marker('b-producer', 'P'), consumer: marker('b-consumer', 'C') };
    setText(caption, `${p.full}[s] hands data from ${p.producer} to ${p.consumer}; ${p.empty ? `${p.empty}[s] returns the buffer from ${p.consumer} to ${p.producer}` : 'no empty barrier array: the buffer is never returned'}.`);
    setText(phaseKey, `In a stage: “full ph 1 (p1)”: its ${p.full} barrier is in phase 1, parity 1 (phases count completions; the parity is the phase mod 2)${p.empty ? `; “empty ph …” likewise for ${p.empty}` : ''}.`);
  };

  /** Puts a role's marker beside its stage, outside the ring: the producer before it, the consumer after it. */
  const placeMarker = (g: SVGGElement, at: RolePlace | null, outside: boolean) => {
    const n = at ? nodes[at.stage] : undefined;
    if (!at || !n) {
      g.setAttribute('visibility', 'hidden');
      return;
    }
    const { cx, cy, r } = geo;
    const one = nodes.length === 1;
    let x: number, y: number;
    if (one) {
      x = cx + (outside ? -1 : 1) * (r + 24);
      y = cy;
    } else {
      // Outside the node, turned a little back (producer) or on (consumer) along the ring.
      const d = r + 14;
      const a = n.a + (outside ? -0.55 : 0.55);
      x = n.x + Math.cos(a) * d;
      y = n.y + Math.sin(a) * d;
    }
    g.setAttribute('transform', `translate(${x.toFixed(1)},${y.toFixed(1)})`);
    g.setAttribute('visibility', 'visible');
    g.classList.toggle('blocked', at.blocked);
  };

  const stageText = (x: StageState, full: string, empty: string | null) =>
    `stage ${x.stage}: ${HOLDER_TEXT[x.holder]}${x.inflight && x.holder === 'tma' ? ` (${x.inflight} ${x.inflight > 1 ? 'copies' : 'copy'} in flight)` : x.holder === 'producer' && x.fullTx > 0 ? ` (expect_tx armed: ${x.fullTx} B, no copy issued yet)` : ''} · ${full} phase ${x.fullPhase} (parity ${x.fullPhase & 1})${empty ? ` · ${empty} phase ${x.emptyPhase} (parity ${x.emptyPhase & 1})` : ''}`;

  const view: RingView = {
    el,
    setModel(model) {
      m = model;
      replace(fullSel);
      replace(emptySel);
      replace(ctaSel);
      if (!m) return rebuild();
      const pair = detectPair(m);
      for (const b of m.program.barriers) {
        fullSel.appendChild(h('option', { value: b.name, selected: b.name === pair?.full }, `${b.name} (${b.length})`));
        emptySel.appendChild(h('option', { value: b.name, selected: b.name === pair?.empty }, `${b.name} (${b.length})`));
      }
      emptySel.appendChild(h('option', { value: '', selected: !pair?.empty }, '(none)'));
      const nCta = Math.min(m.program.ctas, 64);
      for (let c = 0; c < nCta; c++) ctaSel.appendChild(h('option', { value: c }, `c${c}`));
      ctaLabel.hidden = nCta <= 1;
      rebuild();
    },
    update(ev) {
      // Pulse handoffs when stepping or playing; not while scrubbing across many events.
      const animate = Math.abs(ev - lastEv) <= 24;
      lastEv = ev;
      if (!m || !idx) return;
      cycle.update(ev);
      const st = stagesAt(m, idx, ev);
      if (list.children.length !== st.length) replace(list, ...st.map(() => h('li', {})));
      st.forEach((x, i) => {
        const n = nodes[i];
        if (!n) return;
        const changed = prev[i] !== undefined && prev[i] !== x.holder;
        if (prev[i] !== x.holder) n.circle.setAttribute('class', `stage-node h-${x.holder}`);
        if (changed && animate && typeof n.circle.animate === 'function') {
          // The handoff: a short pulse of the stage's outline.
          n.circle.animate([{ strokeWidth: '6px', stroke: '#d62828' }, { strokeWidth: '1.5px', stroke: '#6b7687' }], { duration: 500, easing: 'ease-out' });
        }
        prev[i] = x.holder;
        setText(n.holder, HOLDER_SHORT[x.holder]);
        setText(n.full, `full ph ${x.fullPhase} (p${x.fullPhase & 1})`);
        setText(n.empty, idx!.pair.empty ? `empty ph ${x.emptyPhase} (p${x.emptyPhase & 1})` : '');
        const li = list.children[i] as HTMLElement;
        li.className = `h-${x.holder}-text`;
        setText(li, stageText(x, idx!.pair.full, idx!.pair.empty));
      });
      const pl = placesAt(idx, ev);
      if (markers) {
        placeMarker(markers.producer, pl.producer, true);
        placeMarker(markers.consumer, pl.consumer, false);
      }
      const pr = idx.pair;
      setText(where, `Now: ${pr.producer} ${pl.producer ? `${pl.producer.what} (stage ${pl.producer.stage})` : 'has not reached the ring yet'}; ${pr.consumer} ${pl.consumer ? `${pl.consumer.what} (stage ${pl.consumer.stage})` : 'has not reached the ring yet'}.`);
      const ho = lastHandoff(idx, ev);
      setText(handoff, ho
        ? `${ho.ev === ev ? 'Handoff at the cursor' : 'Last handoff'}: ${ho.kind === 'full' ? pr.full : pr.empty}[${ho.stage}] completed phase ${ho.phase}, so stage ${ho.stage} passed ${ho.kind === 'full' ? `${pr.producer} → ${pr.consumer} (data ready)` : `${pr.consumer} → ${pr.producer} (buffer free)`}.`
        : 'No handoff yet: no full or empty barrier has completed a phase.');
      handoff.classList.toggle('now', !!ho && ho.ev === ev);
    },
  };
  for (const sel of [fullSel, emptySel, ctaSel]) sel.addEventListener('change', () => {
    rebuild();
    view.update(lastEv);
  });
  return view;
}
