/// <reference lib="dom" />
/**
 * The sketch editor: CodeMirror 6 with a small highlighter for the sketch language and live
 * diagnostics from `parseSketch` (src/lang), or for PTX its parse and translation (`parseSource`). When the text parses, the kernel is handed to the app,
 * which re-simulates it; every view follows.
 */
import { basicSetup, EditorView } from 'codemirror';
import { EditorState, Compartment, StateEffect, StateField, RangeSetBuilder } from '@codemirror/state';
import { Decoration, type DecorationSet } from '@codemirror/view';
import { StreamLanguage } from '@codemirror/language';
import { linter, lintGutter, type Diagnostic as CmDiagnostic } from '@codemirror/lint';
import type { PtxLaunch } from '../../ptxi/index.js';
import { parseSource, type SourceDiagnostic } from '../sources.js';
import { h, replace, setText } from '../dom.js';

const KEYWORDS = new Set(['kernel', 'param', 'barrier', 'smem', 'tmem', 'role', 'for', 'in', 'range', 'if', 'else', 'elif', 'elect', 'while']);

const sketchLanguage = StreamLanguage.define<{ start: boolean }>({
  name: 'mbk',
  startState: () => ({ start: true }),
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match(/^#.*/)) return 'comment';
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return 'string';
    if (stream.match(/^\d+x\d+x\d+/)) return 'number';
    if (stream.match(/^(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|\d[\d_]*)/)) return 'number';
    if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_:]*)+/)) return 'keyword';
    const w = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/) as RegExpMatchArray | null;
    if (w) {
      if (stream.peek() === '=' && !stream.match('==', false)) return 'propertyName';
      return KEYWORDS.has(w[0]) ? 'keyword' : 'variableName';
    }
    stream.next();
    return 'operator';
  },
});

export interface EditorViewApi {
  el: HTMLElement;
  /** Shows `text` (a sketch) as editable, or a note for a built-in kernel. */
  /** `launch`: the text is PTX, parsed and translated for this launch (`mbsim serve FILE.ptx`). */
  setSource(src: { text: string; file: string; launch?: PtxLaunch } | { builtin: string; twin?: string }): void;
  /** Called with a sketch that parsed without diagnostics (debounced). */
  onKernelText?: (text: string) => void;
  /** Called when the user asks to open the sketch twin of a built-in example. */
  onOpenTwin?: (path: string) => void;
  /**
   * Highlights a line (the source line of the event at the timeline cursor or of the trace step),
   * or several (a hang's blocked waiters), or 0 / [] for none; `why` says which.
   */
  markLine(line: number | readonly number[], why?: string): void;
  /** Scrolls the highlighted line into view (after the tab becomes visible). */
  reveal(): void;
}

function toCm(state: EditorState, d: SourceDiagnostic): CmDiagnostic {
  const doc = state.doc;
  const ln = doc.line(Math.max(1, Math.min(doc.lines, d.line)));
  const from = Math.min(ln.to, ln.from + Math.max(0, d.col - 1));
  const to = Math.max(from, Math.min(ln.to, ln.from + Math.max(0, d.endCol - 1)));
  return { from, to: to === from && from < ln.to ? from + 1 : to, severity: 'error', message: `[${d.code}] ${d.message}${d.hint ? `\n${d.hint}` : ''}`, source: 'mbsim' };
}

export function editorView(): EditorViewApi {
  let file = 'sketch.mbk';
  let launch: PtxLaunch | undefined;
  let programmatic = false;
  const host = h('div', { class: 'editor-host', 'aria-label': 'sketch editor' });
  const note = h('div', { class: 'editor-note', hidden: true });
  const status = h('p', { class: 'editor-status', id: 'editor-status', 'aria-live': 'polite' });
  const diagList = h('ul', { class: 'editor-diags', id: 'editor-diags', 'aria-label': 'sketch diagnostics' });
  const readOnly = new Compartment();

  const lint = linter((view) => {
    const text = view.state.doc.toString();
    const r = parseSource(text, file, launch);
    replace(diagList, ...r.diagnostics.map((d) => h('li', {}, `${file}:${d.line}:${d.col}: [${d.code}] ${d.message}${d.hint ? ` — ${d.hint}` : ''}`)));
    if (r.kernel) {
      setText(status, `✓ ${launch ? 'translates' : 'parses'}: kernel ${r.kernel.name}`);
      status.className = 'editor-status ok';
      if (!programmatic) api.onKernelText?.(text);
    } else {
      setText(status, `${r.diagnostics.length} problem${r.diagnostics.length === 1 ? '' : 's'}: the views keep the last kernel that parsed`);
      status.className = 'editor-status bad';
    }
    programmatic = false;
    return r.diagnostics.map((d) => toCm(view.state, d));
  }, { delay: 250 });

  // The highlighted line: a line decoration kept in a state field, set by an effect.
  const setMark = StateEffect.define<number[]>();
  const markField = StateField.define<DecorationSet>({
    create: () => Decoration.none,
    update(deco, tr) {
      for (const e of tr.effects) {
        if (!e.is(setMark)) continue;
        const ls = e.value.filter((l) => l > 0 && l <= tr.state.doc.lines);
        if (!ls.length) return Decoration.none;
        const b = new RangeSetBuilder<Decoration>();
        for (const l of ls) b.add(tr.state.doc.line(l).from, tr.state.doc.line(l).from, Decoration.line({ class: 'cm-run-line', attributes: { 'data-run-line': String(l) } }));
        return b.finish();
      }
      return tr.docChanged ? deco.map(tr.changes) : deco;
    },
    provide: (f) => EditorView.decorations.from(f),
  });
  const lineMark = [markField, EditorView.theme({ '.cm-run-line': { backgroundColor: '#ffe9a8', boxShadow: 'inset 3px 0 0 #d62828' } })];
  let marked: number[] = [];
  const markInfo = h('p', { class: 'editor-mark', id: 'editor-mark', 'aria-live': 'off' });
  const cm = new EditorView({
    parent: host,
    state: EditorState.create({
      doc: '',
      extensions: [basicSetup, sketchLanguage, lintGutter(), lint, readOnly.of(EditorState.readOnly.of(false)), lineMark,
        EditorView.contentAttributes.of({ 'aria-label': 'sketch source' })],
    }),
  });

  const SKETCH_LEAD = 'Edit the kernel in the sketch language (docs/LANGUAGE.md). Diagnostics appear as you type; when the sketch parses, every view is recomputed and the link carries it.';
  const PTX_LEAD = 'The PTX of the kernel (docs/PTX.md), run with the launch it was served with. Edit it here: diagnostics appear as you type, and when it parses and translates, every view is recomputed. Lines the views name are PTX lines, each with its CUDA line when the PTX carries -lineinfo.';
  const lead = h('p', { class: 'lead' }, SKETCH_LEAD);
  const api: EditorViewApi = {
    el: h('section', { class: 'view sketch', id: 'view-sketch', 'aria-labelledby': 'sketch-h' },
      h('h2', { id: 'sketch-h' }, 'Sketch'),
      lead,
      note, markInfo, host, status, diagList),
    setSource(src) {
      if ('builtin' in src) {
        note.hidden = false;
        replace(note, h('p', {}, `“${src.builtin}” is a built-in kernel written with the library’s TypeScript builder (docs/API.md); it has no sketch text here.`),
          src.twin ? (() => {
            const b = h('button', { type: 'button' }, `Open its sketch form (${src.twin})`);
            b.addEventListener('click', () => api.onOpenTwin?.(src.twin!));
            return b;
          })() : '');
        host.hidden = true;
        return;
      }
      note.hidden = true;
      host.hidden = false;
      file = src.file;
      launch = src.launch;
      setText(lead, launch ? PTX_LEAD : SKETCH_LEAD);
      if (cm.state.doc.toString() === src.text) return;
      programmatic = true;
      cm.dispatch({ changes: { from: 0, to: cm.state.doc.length, insert: src.text } });
    },
    markLine(line, why) {
      let ls = (typeof line === 'number' ? [line] : [...line]).filter((l) => l > 0 && l <= cm.state.doc.lines);
      if (host.hidden) ls = [];
      ls = [...new Set(ls)].sort((a, b) => a - b);
      setText(markInfo, ls.length ? `Highlighted: line${ls.length > 1 ? 's' : ''} ${ls.join(', ')}, ${why ?? 'the event at the timeline cursor'}.` : '');
      if (ls.join() === marked.join()) return;
      marked = ls;
      const effects: StateEffect<unknown>[] = [setMark.of(ls)];
      if (ls.length && host.offsetParent !== null) effects.push(EditorView.scrollIntoView(cm.state.doc.line(ls[0]!).from, { y: 'center' }));
      cm.dispatch({ effects });
    },
    reveal() {
      const l = marked[0];
      if (l !== undefined && l <= cm.state.doc.lines) requestAnimationFrame(() => cm.dispatch({ effects: EditorView.scrollIntoView(cm.state.doc.line(l).from, { y: 'center' }) }));
    },
  };
  return api;
}
