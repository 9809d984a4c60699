/// <reference lib="dom" />
/**
 * The explorer's legends: rows of entries (a swatch or badge and its words) that wrap between
 * entries, never inside one (style.css `.legend .keys`, `.legend .key`).
 */
import { h } from './dom.js';

/** One legend entry: `mark` (a swatch's class, or an element such as a badge) and its words. */
export function legendKey(mark: string | HTMLElement, text: string): HTMLElement {
  return h('span', { class: 'key' }, typeof mark === 'string' ? h('span', { class: `sw ${mark}` }) : mark, text);
}

/**
 * A legend row: its heading (null: none) and entries. The spaces between entries are for the text
 * (copy, screen readers); the flex row ignores them.
 */
export function legendRow(head: string | null, ...keys: HTMLElement[]): HTMLElement {
  const row = h('p', { class: 'keys' });
  if (head) row.append(h('span', { class: 'key-head' }, head));
  for (const k of keys) row.append(' ', k);
  return row;
}
