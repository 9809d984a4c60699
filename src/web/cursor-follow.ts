/// <reference lib="dom" />
/**
 * What follows the timeline's cursor: the ring of the simulation (and of a replayed
 * counterexample), the replay's step shown in the Check tab, the view state's event (the share
 * link), the inspector's text of the event at the cursor and the editor's line
 * (`cursor-line.ts`). One cursor move updates each of them once.
 */
import { markCursorLine } from './cursor-line.js';
import type { InspectorView } from './inspector.js';
import type { RunModel } from './model.js';
import type { CheckReplay } from './replay.js';
import type { EditorViewApi } from './views/editor.js';
import type { RingView } from './views/ring.js';
import type { TimelineView } from './views/timeline.js';

/** What the follower reads of the page: the model shown, the loaded file, names and lines. */
export interface CursorHost {
  /** The model the views show (null: none yet). */
  model(): RunModel | null;
  /** The loaded file's name (locations of other files are not shown). */
  file(): string | undefined;
  /** The view state's event index (the share link's `ev`). */
  ev(): number;
  /** Sets the view state's event index and saves the share link. */
  setEv(ev: number): void;
  /** Names of the asynchronous operations by id. */
  names(): Map<number, string>;
  /** The source line of a location of the loaded file, or null. */
  sourceLine(loc: { line: number; file?: string } | undefined): string | null;
}

/** The follower: `inspect(ev)` for each cursor move; `reset()` when the model changes. */
export interface CursorFollower {
  /** Updates everything that follows the cursor for event `ev` (−1: before the first). */
  inspect(ev: number): void;
  /** Forgets the last inspected event, so that the next `inspect` redraws (a new model). */
  reset(): void;
}

/** Builds the follower over the views it updates. */
export function cursorFollower(
  host: CursorHost,
  v: { ring: RingView; ring2: RingView; timeline: TimelineView; inspector: InspectorView; editor: EditorViewApi; cr: () => CheckReplay },
): CursorFollower {
  let lastInspected = -2;
  let inspectedModel: RunModel | null = null;
  let lastStep = -1;
  const inspect = (ev: number): void => {
    v.ring.update(ev);
    const cr = v.cr();
    const replay = cr.replay;
    const model = host.model();
    const inReplay = !!replay && model === replay.model;
    if (inReplay) {
      v.ring2.update(ev);
      const k = v.timeline.curStep;
      if (k !== lastStep || ev !== lastInspected) {
        lastStep = k;
        cr.showStep(k);
      }
    } else {
      lastStep = -1;
      if (ev !== host.ev()) host.setEv(ev);
    }
    // In a replay the editor's line depends on the step too (a step may emit no event).
    if (!model || (ev === lastInspected && inspectedModel === model && !inReplay)) return;
    inspectedModel = model;
    lastInspected = ev;
    v.inspector.show(model, ev, host.names(), host.sourceLine);
    // The editor highlights the line of the event at the cursor (or of the replay's step).
    markCursorLine(v.editor, model, ev, inReplay ? { hazard: replay!.hazard, step: v.timeline.curStep } : null, host.file());
  };
  return { inspect, reset: () => { lastInspected = -2; } };
}
