/**
 * The sketch editor's line that follows the timeline's cursor: the line of the event at the
 * cursor, or in a counterexample replay the line of the step at the cursor; at the last step of a
 * hang, the lines where the agents are blocked forever.
 */
import type { Hazard } from '../check/check.js';
import { eventLoc, type RunModel } from './model.js';
import type { EditorViewApi } from './views/editor.js';

/** A source location the editor can show: a line of the loaded file. */
function lineOk(l: { line: number; file?: string } | undefined, file: string | undefined): boolean {
  return !!l && l.line > 0 && (l.file === undefined || l.file === file);
}

/**
 * Marks in `editor` the line for cursor event `ev` of `model` (−1: before the first), or, in a
 * replay, for trace step `replay.step` of `replay.hazard` (1-based; 0: before the first). `file`:
 * the loaded file (locations of other files are not shown).
 */
export function markCursorLine(editor: EditorViewApi, model: RunModel, ev: number, replay: { hazard: Hazard; step: number } | null, file: string | undefined): void {
  const e = ev >= 0 ? model.events[ev] : undefined;
  const loc = e ? eventLoc(e) : undefined;
  const mark = replay ? replay.hazard.trace[replay.step - 1]?.loc : loc;
  const hang = replay && replay.step === replay.hazard.trace.length ? model.sim.hang : null;
  if (hang && hang.waiters.some((w) => lineOk(w.loc, file))) {
    // The end of a hang: what matters is where the agents are stuck, not the last step.
    const ws = hang.waiters.filter((w) => lineOk(w.loc, file));
    editor.markLine(ws.map((w) => w.loc.line), `where ${ws.map((w) => w.name).join(', ')} ${ws.length > 1 ? 'are' : 'is'} blocked forever (the last step of the counterexample)`);
  } else editor.markLine(lineOk(mark, file) ? mark!.line : 0, replay ? `step ${replay.step} of the counterexample` : `the event at the timeline cursor (event ${ev + 1})`);
}
