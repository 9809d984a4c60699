/**
 * The header's kernel parameters: one number input per parameter of the kernel, showing the
 * override or the default; a change to a safe integer sets the override (removes it when it equals
 * the default) and asks for a new run.
 */
import type { Kernel } from '../kernel/ir.js';
import { h, replace } from './dom.js';

/**
 * Fills `box` with the inputs of `kernel`'s parameters (empties it when there is no kernel);
 * `params` is the page's override record, edited in place; `changed` runs after each edit.
 */
export function paramInputs(box: HTMLElement, kernel: Kernel | undefined, params: Record<string, number>, changed: () => void): void {
  replace(box);
  if (!kernel) return;
  for (const p of kernel.params) {
    const v = params[p.name] ?? p.value;
    const inp = h('input', { type: 'number', value: v, step: 1, 'aria-label': `parameter ${p.name}`, class: 'num', 'data-param': p.name });
    inp.addEventListener('change', () => {
      const n = Number(inp.value);
      if (!Number.isSafeInteger(n)) return;
      if (n === p.value) delete params[p.name];
      else params[p.name] = n;
      changed();
    });
    box.appendChild(h('label', {}, `${p.name} `, inp));
  }
}
