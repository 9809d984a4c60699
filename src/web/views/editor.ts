/// <reference lib="dom" />
/**
 * The sketch editor: CodeMirror 6 with a small highlighter for the sketch language and live
 * diagnostics from `parseSketch` (src/lang). When the text parses, the kernel is handed to the app,
 * which re-simulates it; every view follows.
 */
import { basicSetup, EditorView } from 'codemirror';
import { EditorState, Compartment } from '@codemirror/state';
import { StreamLanguage } from '@codemirror/language';
import { linter, lintGutter, type Diagnostic as CmDiagnostic } from '@codemirror/lint';
import { parseSketch, type SketchDiagnostic } from '../../lang/index.js';
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
  setSource(src: { text: string; file: string } | { builtin: string; twin?: string }): void;
  /** Called with a sketch that parsed without diagnostics (debounced). */
  onKernelText?: (text: string) => void;
  /** Called when the user asks to open the sketch twin of a built-in example. */
  onOpenTwin?: (path: string) => void;
  /** Highlights a line (the timeline cursor's source line), or 0 for none. */
  markLine(line: number): void;
}

function toCm(state: EditorState, d: SketchDiagnostic): CmDiagnostic {
  const doc = state.doc;
  const ln = doc.line(Math.max(1, Math.min(doc.lines, d.line)));
  const from = Math.min(ln.to, ln.from + Math.max(0, d.col - 1));
  const to = Math.max(from, Math.min(ln.to, ln.from + Math.max(0, d.endCol - 1)));
  return { from, to: to === from && from < ln.to ? from + 1 : to, severity: 'error', message: `[${d.code}] ${d.message}${d.hint ? `\n${d.hint}` : ''}`, source: 'mbsim' };
}

export function editorView(): EditorViewApi {
  let file = 'sketch.mbk';
  let programmatic = false;
  const host = h('div', { class: 'editor-host', 'aria-label': 'sketch editor' });
  const note = h('div', { class: 'editor-note', hidden: true });
  const status = h('p', { class: 'editor-status', id: 'editor-status', 'aria-live': 'polite' });
  const diagList = h('ul', { class: 'editor-diags', id: 'editor-diags', 'aria-label': 'sketch diagnostics' });
  const readOnly = new Compartment();

  const lint = linter((view) => {
    const text = view.state.doc.toString();
    const r = parseSketch(text, file);
    replace(diagList, ...r.diagnostics.map((d) => h('li', {}, `${file}:${d.line}:${d.col}: [${d.code}] ${d.message}${d.hint ? ` — ${d.hint}` : ''}`)));
    if (r.kernel) {
      setText(status, `✓ parses: kernel ${r.kernel.name}`);
      status.className = 'editor-status ok';
      if (!programmatic) api.onKernelText?.(text);
    } else {
      setText(status, `${r.diagnostics.length} problem${r.diagnostics.length === 1 ? '' : 's'}: the views keep the last kernel that parsed`);
      status.className = 'editor-status bad';
    }
    programmatic = false;
    return r.diagnostics.map((d) => toCm(view.state, d));
  }, { delay: 250 });

  const lineMark = EditorView.theme({});
  const cm = new EditorView({
    parent: host,
    state: EditorState.create({
      doc: '',
      extensions: [basicSetup, sketchLanguage, lintGutter(), lint, readOnly.of(EditorState.readOnly.of(false)), lineMark,
        EditorView.contentAttributes.of({ 'aria-label': 'sketch source' })],
    }),
  });

  const api: EditorViewApi = {
    el: h('section', { class: 'view sketch', id: 'view-sketch', 'aria-labelledby': 'sketch-h' },
      h('h2', { id: 'sketch-h' }, 'Sketch'),
      h('p', { class: 'lead' }, 'Edit the kernel in the sketch language (docs/LANGUAGE.md). Diagnostics appear as you type; when the sketch parses, every view is recomputed and the link carries it.'),
      note, host, status, diagList),
    setSource(src) {
      if ('builtin' in src) {
        note.hidden = false;
        replace(note, h('p', {}, `“${src.builtin}” is a built-in kernel written with the TypeScript builder (src/examples/index.ts); it has no sketch text here.`),
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
      if (cm.state.doc.toString() === src.text) return;
      programmatic = true;
      cm.dispatch({ changes: { from: 0, to: cm.state.doc.length, insert: src.text } });
    },
    markLine(line) {
      if (line <= 0 || line > cm.state.doc.lines || host.hidden) return;
      const l = cm.state.doc.line(line);
      if (cm.state.selection.main.from === l.from) return;
      cm.dispatch({ selection: { anchor: l.from, head: l.to }, scrollIntoView: true });
    },
  };
  return api;
}
