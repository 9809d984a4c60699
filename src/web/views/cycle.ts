/// <reference lib="dom" />
/**
 * The chapter's full/empty figure for one stage, live: producer → full[s] → consumer → empty[s] →
 * producer drawn as a loop of four arrows, the one the cursor last reached lit (and pulsing when
 * the cursor is on it), with a line saying what happened. Fed by src/web/cycle-model.ts; shown
 * beside the ring of all stages (views/ring.ts).
 */
import { cycleAt, type CycleIndex } from '../cycle-model.js';
import { h, s, setText } from '../dom.js';

export interface CycleView {
  el: HTMLElement;
  /** A new run or full/empty pair: names of the roles and arrays (null: no ring). */
  setPair(p: { producer: string; consumer: string; full: string; empty: string | null } | null, c: CycleIndex | null): void;
  update(ev: number): void;
}

/** The arrows' paths (viewBox 0 0 440 290) and their two-line labels, each in a corner clear of the boxes. */
const ARROWS: { d: string; lx: number; ly: number; anchor: string; text: [string, string] }[] = [
  { d: 'M 70 123 Q 80 45 164 40', lx: 8, ly: 22, anchor: 'start', text: ['arrive.expect_tx,', 'then bytes land'] },
  { d: 'M 276 40 Q 360 45 370 121', lx: 432, ly: 22, anchor: 'end', text: ['phase completes:', 'consumer’s wait passes'] },
  { d: 'M 370 167 Q 360 245 276 250', lx: 432, ly: 262, anchor: 'end', text: ['the consumer arrives', '(done with the buffer)'] },
  { d: 'M 164 250 Q 80 245 70 169', lx: 8, ly: 262, anchor: 'start', text: ['phase completes:', 'producer’s wait passes'] },
];

/**
 * `t` in at most `n` characters, an ellipsis where it was cut. A name ending in warps (`k.w1–w3`)
 * keeps them: the role's name is cut instead (`tma_pi….w1–w3`), so the warps stay told apart.
 */
export const clip = (t: string, n: number): string => {
  if (t.length <= n) return t;
  const w = /\.w\d+(?:–w\d+)?$/.exec(t);
  if (w && !t.includes(',') && w[0].length + 2 <= n) return `${t.slice(0, n - w[0].length - 1)}…${w[0]}`;
  return `${t.slice(0, n - 1)}…`;
};

/** Builds the figure; `idp` prefixes its element ids. */
export function cycleView(idp: string): CycleView {
  let idx: CycleIndex | null = null;
  let last = -2;
  const svg = s('svg', { class: 'cycle', role: 'img', 'aria-label': 'one stage’s full/empty cycle', viewBox: '0 0 440 290', width: 440, height: 290 });
  const defs = s('defs', {});
  const head = s('marker', { id: `${idp}-arrowhead`, viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
  head.appendChild(s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'cycle-head' }));
  const headLit = s('marker', { id: `${idp}-arrowhead-lit`, viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' });
  headLit.appendChild(s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'cycle-head lit' }));
  defs.append(head, headLit);
  svg.appendChild(defs);
  const box = (x: number, y: number, w: number, cls: string) => {
    const g = s('g', { class: `cycle-node ${cls}` });
    const t = s('text', { x: x + w / 2, y: y + 29, 'text-anchor': 'middle', class: 'cycle-label' });
    const sub = s('text', { x: x + w / 2, y: y + 14, 'text-anchor': 'middle', class: 'cycle-sub' });
    g.append(s('rect', { x, y, width: w, height: 40, rx: 8 }), sub, t);
    svg.appendChild(g);
    return { g, t, sub };
  };
  const paths = ARROWS.map((a, i) => {
    const p = s('path', { d: a.d, class: 'cycle-arrow', 'marker-end': `url(#${idp}-arrowhead)`, 'data-arrow': i });
    const l = s('text', { x: a.lx, y: a.ly, 'text-anchor': a.anchor, class: 'cycle-arrow-label' },
      s('tspan', { x: a.lx, dy: 0 }, a.text[0]), s('tspan', { x: a.lx, dy: 16 }, a.text[1]));
    svg.append(p, l);
    return { p, l };
  });
  /** A node's hover text: an SVG `<title>`, its first child. */
  const setTitle = (g: SVGGElement, text: string) => {
    let t: SVGTitleElement | null = g.querySelector<SVGTitleElement>('title');
    if (!t) {
      t = s('title', {});
      g.prepend(t);
    }
    setText(t, text);
  };
  const prodN = box(10, 125, 120, 'c-producer');
  const consN = box(310, 125, 120, 'c-consumer');
  const fullN = box(164, 20, 112, 'c-full');
  const emptyN = box(164, 230, 112, 'c-empty');
  setText(prodN.sub, 'producer');
  setText(consN.sub, 'consumer');
  setText(fullN.sub, 'full barrier');
  setText(emptyN.sub, 'empty barrier');
  const stageT = s('text', { x: 220, y: 150, 'text-anchor': 'middle', class: 'cycle-stage' });
  svg.appendChild(stageT);
  const now = h('p', { class: 'cycle-now', id: `${idp}-cycle-now`, 'aria-live': 'off' });
  const el = h('figure', { class: 'cycle-fig', id: `${idp}-cycle` },
    h('figcaption', {}, 'One stage’s cycle'), svg, now);
  let names = { full: 'full', empty: 'empty' as string | null };

  return {
    el,
    setPair(p, c) {
      idx = c;
      last = -2;
      el.hidden = !p;
      if (!p) return;
      names = { full: p.full, empty: p.empty };
      setText(prodN.t, clip(p.producer, 15));
      setText(consN.t, clip(p.consumer, 15));
      // The whole names on hover.
      setTitle(prodN.g, `producer: ${p.producer}`);
      setTitle(consN.g, `consumer: ${p.consumer}`);
      emptyN.g.classList.toggle('absent', !p.empty);
      paths[2]!.p.classList.toggle('absent', !p.empty);
      paths[3]!.p.classList.toggle('absent', !p.empty);
    },
    update(ev) {
      if (!idx) return;
      const st = cycleAt(idx, ev);
      const stage = st?.stage ?? 0;
      setText(fullN.t, `${clip(names.full, 8)}[${stage}]`);
      setText(emptyN.t, names.empty ? `${clip(names.empty, 8)}[${stage}]` : 'none');
      setText(stageT, `stage ${stage}`);
      paths.forEach((x, i) => {
        const on = !!st && st.arrow === i;
        x.p.classList.toggle('lit', on);
        x.l.classList.toggle('lit', on);
        x.p.setAttribute('marker-end', `url(#${idp}-arrowhead${on ? '-lit' : ''})`);
        if (on && st.ev === ev && last !== ev && typeof x.p.animate === 'function') {
          x.p.animate([{ strokeWidth: '8px' }, { strokeWidth: '4px' }], { duration: 450, easing: 'ease-out' });
        }
      });
      last = ev;
      setText(now, st ? `${st.ev === ev ? 'At the cursor' : 'Last step of the cycle'}: stage ${st.stage}, ${st.what}.` : 'The cycle has not started: no arrival, wait or completion on a full or empty barrier yet.');
      now.classList.toggle('now', !!st && st.ev === ev);
      now.dataset.arrow = st ? String(st.arrow) : '';
    },
  };
}
