/**
 * The view state that travels in the URL hash: which kernel (a built-in example, a bundled sketch
 * file, or sketch text compressed with lz-string), parameter overrides, the open tab, the timeline
 * cursor and the phase-tracking inputs. Everything decoded here is untrusted: it is validated
 * (names against known lists, integers in ranges) and later only ever shown as text.
 */
import { compressToEncodedURIComponent, decompressFromEncodedURIComponent } from 'lz-string';

export const TABS = ['mechanism', 'phases', 'timeline', 'check', 'sketch'] as const;
export type Tab = (typeof TABS)[number];

/** Where the kernel comes from. */
export type SourceRef =
  | { kind: 'example'; name: string }
  | { kind: 'file'; path: string }
  | { kind: 'sketch'; name: string; text: string };

export interface ViewState {
  source: SourceRef;
  /** Parameter overrides (validated against the kernel's parameters when applied). */
  params: Record<string, number>;
  tab: Tab;
  /** Timeline cursor: event index (−1: before the first event). */
  ev: number;
  /** Phase-tracking view: stage count and iterations. */
  ps: number;
  pn: number;
}

/** Largest sketch accepted from a link (characters, after decompression). */
export const MAX_SKETCH = 200_000;

const NAME_RE = /^[A-Za-z0-9_.\-/ ]{1,200}$/;
const PARAM_RE = /^([A-Za-z_][A-Za-z0-9_]{0,63})=(-?\d{1,15})$/;

export function defaultView(): ViewState {
  return { source: { kind: 'file', path: 'examples/pipeline.mbk' }, params: {}, tab: 'timeline', ev: -1, ps: 2, pn: 4 };
}

/** Encodes a view as a hash (without the leading '#'). */
export function encodeView(v: ViewState): string {
  const q = new URLSearchParams();
  if (v.source.kind === 'example') q.set('ex', v.source.name);
  else if (v.source.kind === 'file') q.set('file', v.source.path);
  else {
    q.set('name', v.source.name);
    q.set('sk', compressToEncodedURIComponent(v.source.text));
  }
  const sets = Object.entries(v.params).map(([k, x]) => `${k}=${x}`).join(',');
  if (sets) q.set('set', sets);
  q.set('tab', v.tab);
  if (v.ev >= 0) q.set('ev', String(v.ev));
  if (v.ps !== 2) q.set('ps', String(v.ps));
  if (v.pn !== 4) q.set('pn', String(v.pn));
  return q.toString();
}

function int(s: string | null, lo: number, hi: number, dflt: number): number {
  if (s === null || !/^-?\d{1,12}$/.test(s)) return dflt;
  const n = Number(s);
  return n < lo || n > hi ? dflt : n;
}

/**
 * Decodes a hash (with or without '#'). Unknown or malformed fields fall back to defaults;
 * `isExample` / `isFile` say which names are known. Returns the view and a list of warnings.
 */
export function decodeView(hash: string, isExample: (n: string) => boolean, isFile: (p: string) => boolean): { view: ViewState; warnings: string[] } {
  const view = defaultView();
  const warnings: string[] = [];
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!raw) return { view, warnings };
  if (raw.length > 400_000) return { view, warnings: ['link too long; ignored'] };
  const q = new URLSearchParams(raw);
  const ex = q.get('ex'), file = q.get('file'), sk = q.get('sk');
  if (sk !== null) {
    let text: string | null = null;
    try {
      text = decompressFromEncodedURIComponent(sk);
    } catch {
      text = null;
    }
    if (typeof text !== 'string' || text.length === 0) warnings.push('the sketch in the link could not be decompressed');
    else if (text.length > MAX_SKETCH) warnings.push(`the sketch in the link is longer than ${MAX_SKETCH} characters; ignored`);
    else {
      const name = q.get('name');
      view.source = { kind: 'sketch', name: name && NAME_RE.test(name) ? name : 'shared.mbk', text };
    }
  } else if (file !== null) {
    if (isFile(file)) view.source = { kind: 'file', path: file };
    else warnings.push('unknown sketch file in the link');
  } else if (ex !== null) {
    if (isExample(ex)) view.source = { kind: 'example', name: ex };
    else warnings.push('unknown example in the link');
  }
  const set = q.get('set');
  if (set) {
    for (const part of set.split(',').slice(0, 64)) {
      const m = PARAM_RE.exec(part.trim());
      if (!m) {
        warnings.push('a malformed parameter in the link was ignored');
        continue;
      }
      const v = Number(m[2]);
      if (Number.isSafeInteger(v)) view.params[m[1]!] = v;
    }
  }
  const tab = q.get('tab');
  if (tab && (TABS as readonly string[]).includes(tab)) view.tab = tab as Tab;
  view.ev = int(q.get('ev'), -1, 1e9, -1);
  // The phase view's S and N: a number out of range is clamped (and said so), anything else ignored.
  const clamped = (key: string, what: string, lo: number, hi: number, dflt: number) => {
    const raw = q.get(key);
    if (raw === null || !/^-?\d{1,12}$/.test(raw)) return dflt;
    const n = Number(raw);
    if (n >= lo && n <= hi) return n;
    const c = Math.max(lo, Math.min(hi, n));
    warnings.push(`the link's ${what} ${n} is out of range (${lo}–${hi}): clamped to ${c}`);
    return c;
  };
  view.ps = clamped('ps', 'stage count S', 1, 16, 2);
  view.pn = clamped('pn', 'iteration count N', 1, 256, 4);
  return { view, warnings };
}
