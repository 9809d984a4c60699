/// <reference lib="dom" />
/**
 * Full/empty protocol (the seed's fourth figure, for any kernel): the stages as a ring, each with its
 * full and empty barrier's phase and who holds the buffer (producer, TMA filling it, consumer),
 * following the timeline cursor. Handoffs flash when the holder changes.
 */
import type { RunModel } from '../model.js';
import { detectPair, ringIndex, stagesAt, type Holder, type RingIndex, type StageState } from '../ring-model.js';
import { h, replace, s, setText } from '../dom.js';

export interface RingView {
  el: HTMLElement;
  setModel(m: RunModel | null): void;
  update(ev: number): void;
}

const HOLDER_TEXT: Record<Holder, string> = { producer: 'free: producer', tma: 'TMA filling', consumer: 'ready: consumer' };

export function ringView(idp = 'ring'): RingView {
  let m: RunModel | null = null;
  let idx: RingIndex | null = null;
  let prev: Holder[] = [];
  let lastEv = -1;
  let nodes: { g: SVGGElement; circle: SVGCircleElement; holder: SVGTextElement; full: SVGTextElement; empty: SVGTextElement }[] = [];
  const sfx = idp === 'ring' ? '' : ' (replay)';
  const svg = s('svg', { class: 'ring', role: 'img', 'aria-label': `${'full/empty ring'}${sfx}`, viewBox: '0 0 480 400', width: 480, height: 400 });
  const ctaSel = h('select', { 'aria-label': `${'CTA shown in the ring'}${sfx}` });
  const ctaLabel = h('label', { hidden: true }, 'CTA ', ctaSel);
  const fullSel = h('select', { 'aria-label': `${'full barrier array'}${sfx}` });
  const emptySel = h('select', { 'aria-label': `${'empty barrier array'}${sfx}` });
  const caption = h('p', { class: 'ring-caption', id: `${idp}-caption` });
  const list = h('ul', { class: 'ring-list', id: `${idp}-list`, 'aria-label': idp === 'ring' ? 'stages' : 'stages in the replay' });
  const legend = h('p', { class: 'legend' },
    h('span', { class: 'sw h-producer' }), ' free (producer may refill) ',
    h('span', { class: 'sw h-tma' }), ' TMA filling ',
    h('span', { class: 'sw h-consumer' }), ' ready (consumer holds)');
  const el = h('section', { class: 'ring-view', 'aria-labelledby': `${idp}-h` },
    h('h3', { id: `${idp}-h` }, 'Full/empty protocol'),
    h('div', { class: 'controls' }, h('label', {}, 'full ', fullSel), h('label', {}, 'empty ', emptySel), ctaLabel),
    svg, caption, legend, list);

  const rebuild = () => {
    nodes = [];
    prev = [];
    replace(svg);
    if (!m) return;
    const full = fullSel.value, empty = emptySel.value || null;
    const info = m.program.barriers.find((b) => b.name === full);
    if (!info) {
      idx = null;
      setText(caption, 'This kernel has no barrier arrays.');
      return;
    }
    const pair = detectPair(m)!;
    const p = { ...pair, full, empty, stages: info.length };
    idx = ringIndex(m, p, Number(ctaSel.value) || 0);
    const S = p.stages;
    const one = S === 1;
    const cx = 240, cy = one ? 60 : 200, R = one ? 0 : Math.min(150, 95 + S * 8);
    const hgt = one ? 150 : 400;
    svg.setAttribute('viewBox', `0 0 480 ${hgt}`);
    svg.setAttribute('height', String(hgt));
    if (!one) svg.appendChild(s('circle', { cx, cy, r: R, class: 'ring-track' }));
    const ty = one ? cy + 66 : cy - 6;
    svg.appendChild(s('text', { x: cx, y: ty, 'text-anchor': 'middle', class: 'svg-small' }, `producer: ${p.producer}`));
    svg.appendChild(s('text', { x: cx, y: ty + 16, 'text-anchor': 'middle', class: 'svg-small' }, `consumer: ${p.consumer}`));
    for (let st = 0; st < S; st++) {
      const a = -Math.PI / 2 + (2 * Math.PI * st) / S;
      const x = cx + R * Math.cos(a), y = cy + R * Math.sin(a);
      const g = s('g', { class: 'stage', transform: `translate(${x.toFixed(1)},${y.toFixed(1)})` });
      const circle = s('circle', { r: 44, class: 'stage-node h-producer' });
      const holder = s('text', { y: -6, 'text-anchor': 'middle', class: 'svg-small' });
      const fullT = s('text', { y: 10, 'text-anchor': 'middle', class: 'svg-tiny' });
      const emptyT = s('text', { y: 23, 'text-anchor': 'middle', class: 'svg-tiny' });
      g.append(circle, s('text', { y: -22, 'text-anchor': 'middle', class: 'svg-small strong' }, `stage ${st}`), holder, fullT, emptyT);
      svg.appendChild(g);
      nodes.push({ g, circle, holder, full: fullT, empty: emptyT });
    }
    setText(caption, `${p.full}[s] hands data from ${p.producer} to ${p.consumer}; ${p.empty ? `${p.empty}[s] returns the buffer` : 'no empty barrier array: the buffer is never returned'}.`);
  };

  const stageText = (x: StageState, full: string, empty: string | null) =>
    `stage ${x.stage}: ${HOLDER_TEXT[x.holder]}${x.inflight ? ` (${x.inflight} ${x.inflight > 1 ? 'copies' : 'copy'} in flight)` : ''} · ${full} phase ${x.fullPhase} (parity ${x.fullPhase & 1})${empty ? ` · ${empty} phase ${x.emptyPhase} (parity ${x.emptyPhase & 1})` : ''}`;

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
        setText(n.holder, HOLDER_TEXT[x.holder]);
        setText(n.full, `${idx!.pair.full} ph ${x.fullPhase} (p${x.fullPhase & 1})`);
        setText(n.empty, idx!.pair.empty ? `${idx!.pair.empty} ph ${x.emptyPhase} (p${x.emptyPhase & 1})` : '');
        const li = list.children[i] as HTMLElement;
        li.className = `h-${x.holder}-text`;
        setText(li, stageText(x, idx!.pair.full, idx!.pair.empty));
      });
    },
  };
  for (const sel of [fullSel, emptySel, ctaSel]) sel.addEventListener('change', () => {
    rebuild();
    view.update(lastEv);
  });
  return view;
}
