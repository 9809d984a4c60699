/**
 * The view state that travels in the URL hash: which kernel (a built-in example, a bundled sketch
 * file, or sketch text compressed with lz-string), parameter overrides, the open tab, the timeline
 * cursor and the phase-tracking inputs. Everything decoded here is untrusted: it is validated
 * (names against known lists, integers in ranges) and later only ever shown as text.
 */
import type { PtxLaunch } from '../ptxi/index.js';
import { compressToEncodedURIComponent, decompressFromEncodedURIComponent } from 'lz-string';

export const TABS = ['mechanism', 'phases', 'timeline', 'check', 'sketch'] as const;
export type Tab = (typeof TABS)[number];

/** Where the kernel comes from. */
export type SourceRef =
  | { kind: 'example'; name: string }
  | { kind: 'file'; path: string }
  | { kind: 'sketch'; name: string; text: string }
  /** A PTX file with its launch (`mbsim serve FILE.ptx`): translated as `mbsim run | check` do. */
  | { kind: 'ptx'; name: string; text: string; launch: PtxLaunch };

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
    if (v.source.kind === 'ptx') q.set('launch', JSON.stringify(v.source.launch));
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

/** Largest PTX file the page accepts from `mbsim serve` (characters). */
export const MAX_PTX = 16_000_000;

const LAUNCH_INTS = ['block', 'cluster', 'grid', 'dynamicSmem'] as const;
const KEY_RE = /^([A-Za-z_$][\w$]{0,200}|\d{1,4})$/;

/**
 * A PTX launch from untrusted JSON (a link, the server's answer), or null: the keys of
 * {@link PtxLaunch} only, integers in ranges, names of parameter form; the translation then checks
 * them against the kernel as for the CLI.
 */
export function launchOf(json: string | unknown): PtxLaunch | null {
  let o: unknown = json;
  if (typeof json === 'string') {
    if (json.length > 100_000) return null;
    try {
      o = JSON.parse(json);
    } catch {
      return null;
    }
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return null;
  const out: PtxLaunch = {};
  const r = o as Record<string, unknown>;
  const int = (x: unknown, lo: number, hi: number) => typeof x === 'number' && Number.isSafeInteger(x) && x >= lo && x <= hi;
  for (const [k, x] of Object.entries(r)) {
    if (k === 'kernel') {
      if (typeof x !== 'string' || x.length > 4096) return null;
      out.kernel = x;
    } else if ((LAUNCH_INTS as readonly string[]).includes(k)) {
      if (k === 'block' && Array.isArray(x) && x.length >= 1 && x.length <= 3 && x.every((d) => int(d, 1, 1024))) {
        out.block = x as number[];
        continue;
      }
      if (!int(x, k === 'dynamicSmem' ? 0 : 1, k === 'dynamicSmem' ? 1 << 24 : 1 << 20)) return null;
      out[k as 'grid'] = x as number;
    } else if (k === 'params' || k === 'tensorMaps') {
      if (typeof x !== 'object' || x === null || Array.isArray(x)) return null;
      const m: Record<string, number> = {};
      for (const [n, y] of Object.entries(x as Record<string, unknown>)) {
        if (!KEY_RE.test(n) || !int(y, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) return null;
        Object.defineProperty(m, n, { value: y, enumerable: true, writable: true, configurable: true });
      }
      out[k] = m;
    } else return null;
  }
  return out;
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
      const lj = q.get('launch');
      const launch = lj === null ? null : launchOf(lj);
      if (lj !== null && !launch) warnings.push('the PTX launch in the link is malformed; ignored');
      if (launch) view.source = { kind: 'ptx', name: name && NAME_RE.test(name) && /\.ptx$/i.test(name) ? name : 'shared.ptx', text, launch };
      else view.source = { kind: 'sketch', name: name && NAME_RE.test(name) ? name : 'shared.mbk', text };
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
