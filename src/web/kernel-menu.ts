/// <reference lib="dom" />
/**
 * The header's kernel menu: the sketch files (examples/*.mbk), the buggy sketches (examples/bugs)
 * and the built-in TypeScript examples without a sketch twin, in groups. A built-in example whose
 * sketch is bundled is the same kernel: it stays selectable for links (#ex=NAME) as a hidden option
 * named "NAME (built-in)". Option values: `file:PATH`, `ex:NAME`, `sketch:` (an edited sketch).
 * Below the header, a row of buttons opens each of the chapter's four figures.
 */
import { h } from './dom.js';
import { EXAMPLES, SKETCH_FILES, sketchTwin } from './sources.js';

/** The menu and its (hidden) option for an edited or shared sketch. */
export function kernelMenu(): { select: HTMLSelectElement; sketchOpt: HTMLOptionElement } {
  const select = h('select', { id: 'example', 'aria-label': 'example' });
  const sketchOpt = h('option', { value: 'sketch:', disabled: true, hidden: true }, 'edited sketch');
  // Sketch files first. A built-in (TypeScript builder) example whose sketch file is bundled is the
  // same kernel: it is not listed (it would look like a duplicate), but stays selectable for links
  // (#ex=NAME) as a hidden option that names itself "(built-in)".
  const gSk = h('optgroup', { label: 'Sketch files (examples/*.mbk)' });
  const gBug = h('optgroup', { label: 'Buggy sketch files (examples/bugs)' });
  const gBuiltin = h('optgroup', { label: 'Built-in (TypeScript builder)' });
  for (const f of SKETCH_FILES) (f.group === 'bugs' ? gBug : gSk).appendChild(h('option', { value: `file:${f.path}`, title: f.summary }, f.path.replace(/^examples\//, '')));
  const twins: HTMLOptionElement[] = [];
  for (const ex of EXAMPLES) {
    const twin = !!sketchTwin(ex.name);
    const o = h('option', { value: `ex:${ex.name}`, title: ex.summary, ...(twin ? { hidden: true } : {}) }, `${ex.name} (built-in)`);
    if (twin) twins.push(o);
    else gBuiltin.appendChild(o);
  }
  select.append(gSk, gBug, ...(gBuiltin.children.length ? [gBuiltin] : []), ...twins, sketchOpt);
  return { select, sketchOpt };
}

/** What each figure button does. */
export interface FigureActions {
  mechanism(): void;
  phases(): void;
  tma(): void;
  fullEmpty(): void;
}

/** The row of figure buttons; each button's accessible name is its visible text, its title says what it opens. */
export function figuresNav(a: FigureActions): HTMLElement {
  const figBtn = (label: string, title: string, fn: () => void) => {
    const b = h('button', { type: 'button', class: 'fig', title }, label);
    b.addEventListener('click', fn);
    return b;
  };
  return h('nav', { class: 'figures', 'aria-label': 'the chapter’s figures' }, h('span', { class: 'fig-lead' }, 'The chapter’s figures:'),
    figBtn('1 · mbarrier state and operations', 'Chapter figure 1: one mbarrier, its fields and operations (Barrier mechanism tab)', a.mechanism),
    figBtn('2 · phase tracking', 'Chapter figure 2: the phase-tracking loop (Phase tracking tab)', a.phases),
    figBtn('3 · TMA loads tracked by an mbarrier', 'Chapter figure 3: the timeline of examples/mechanism.mbk', a.tma),
    figBtn('4 · full/empty protocol', 'Chapter figure 4: the timeline and full/empty ring of examples/pipeline.mbk', a.fullEmpty));
}
