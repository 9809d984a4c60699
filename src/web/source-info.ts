/**
 * Where the page's kernel comes from, in words and from the server: the header's one-line summary
 * of a source (built-in example, example file, the sketch `mbsim serve` opened or an edited one, a
 * PTX file with its launch), and the file `mbsim serve FILE` opened: the server offers it as
 * `mbsim-file.json` and says so in the page's `<meta name="mbsim-file">`; a plain static server
 * has neither, and the page asks for nothing. A PTX file comes with its launch (its sidecar and
 * the flags of `mbsim serve`).
 */
import type { PtxLaunch } from '../ptxi/index.js';
import { launchOf, MAX_PTX, MAX_SKETCH, type SourceRef } from './share.js';
import { EXAMPLES, leadComment, SKETCH_FILES } from './sources.js';

/** A launch as one line: `block 128, params param_2=4`. */
export function launchText(l: PtxLaunch): string {
  const parts: string[] = [];
  if (l.kernel !== undefined) parts.push(`kernel ${l.kernel}`);
  for (const k of ['block', 'cluster', 'grid', 'dynamicSmem'] as const) if (l[k] !== undefined) parts.push(`${k} ${String(l[k])}`);
  for (const k of ['params', 'tensorMaps'] as const) {
    const e = Object.entries(l[k] ?? {});
    if (e.length) parts.push(`${k} ${e.map(([n, x]) => `${n}=${x}`).join(' ')}`);
  }
  return parts.join(', ') || 'the defaults';
}

/**
 * The header's summary of source `src` whose text is `text`: an example's own summary, a sketch's
 * name, whether it is the file `mbsim serve` opened (`servedText`) and its leading comment, a PTX
 * file's name and launch.
 */
export function sourceSummary(src: SourceRef, text: string | undefined, servedText: string | undefined): string {
  const ex = src.kind === 'example' ? EXAMPLES.find((e) => e.name === src.name) : undefined;
  const file = src.kind === 'file' ? SKETCH_FILES.find((f) => f.path === src.path) : undefined;
  const firstComment = leadComment(text ?? '');
  return ex ? `${ex.summary} (built-in, written with the TypeScript builder)` : file ? file.summary : src.kind === 'sketch' ? `${src.name} (${src.text === servedText ? 'the file mbsim serve opened' : 'edited or shared sketch'})${firstComment ? `: ${firstComment}` : ''}`
    : src.kind === 'ptx' ? `${src.name} (PTX, translated for its launch: ${launchText(src.launch)})` : '';
}

/**
 * Asks the server for the served file (only when the page has no view in its hash and the meta
 * tag is there) and opens it with `open`: a sketch with its text as `sketchText`, a PTX file with
 * its launch. A name outside `[A-Za-z0-9_.\- ]{1,120}` becomes `file.mbk` / `file.ptx`; a text past
 * the size bound or a failed request opens nothing.
 */
export function openServedFile(open: (src: SourceRef, sketchText: string | undefined) => void): void {
  if (location.hash || !document.querySelector('meta[name="mbsim-file"]')) return;
  fetch('mbsim-file.json', { cache: 'no-store' }).then(async (r) => {
    if (!r.ok) return;
    const j = (await r.json()) as unknown;
    const o = j as { name?: unknown; text?: unknown; launch?: unknown };
    const launch = o?.launch === undefined ? null : launchOf(o.launch);
    if (typeof o?.text !== 'string' || o.text.length > (launch ? MAX_PTX : MAX_SKETCH)) return;
    const name = typeof o.name === 'string' && /^[A-Za-z0-9_.\- ]{1,120}$/.test(o.name) ? o.name : launch ? 'file.ptx' : 'file.mbk';
    open(launch ? { kind: 'ptx', name, text: o.text, launch } : { kind: 'sketch', name, text: o.text }, launch ? undefined : o.text);
  }).catch(() => undefined);
}
