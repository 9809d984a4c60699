/**
 * The progress bar of `mbsim check` on a terminal (cli-progress), loaded by src/check/index.ts only
 * when one is drawn.
 */
import cliProgress from 'cli-progress';
import type { CheckResult } from './check.js';
import type { Progress } from './explore.js';
import { boundFraction, formatProgress, type ProgressStream, type SearchBounds } from './index.js';

/**
 * The `cli-progress` bar of a check (or of each combination of a sweep) on a terminal stream.
 * The search is synchronous, so the bar is redrawn from the explorer's `onProgress` (every
 * ~0.25 s) rather than from a timer; {@link CheckProgressBar.stop} clears its line.
 */
export class CheckProgressBar {
  private readonly bar: cliProgress.SingleBar;
  private label = '';
  private last: Progress | null = null;

  constructor(stream: ProgressStream, private readonly bounds: SearchBounds) {
    this.bar = new cliProgress.SingleBar({
      stream: stream as unknown as NodeJS.WritableStream,
      format: (_o, params, payload: { p?: Progress; label?: string }) =>
        formatProgress(payload.p ?? ZERO, this.bounds, params.maxWidth, payload.label ?? ''),
      clearOnComplete: true,
      // Leave the terminal's wrapping and cursor alone: a Ctrl-C in the middle of the (synchronous)
      // search cannot run a handler that would restore them. Lines are cut to the width instead.
      linewrap: true,
      hideCursor: false,
      gracefulExit: false,
    });
  }

  /** Starts (or restarts, for the next combination of a sweep) the bar at zero under `label`. */
  start(label = ''): void {
    this.label = label;
    this.last = null;
    if (this.bar.isActive) this.bar.update(0, { p: ZERO, label });
    else this.bar.start(1000, 0, { p: ZERO, label });
  }

  /** Shows the explorer's figures (the `onProgress` callback). */
  update = (p: Progress): void => {
    this.last = p;
    this.bar.update(Math.round(boundFraction(p, this.bounds).fraction * 1000), { p, label: this.label });
  };

  /** Draws a finished check's figures (its coverage) now, whatever the redraw throttle says. */
  finish(r: CheckResult): void {
    const c = r.coverage;
    this.update({ states: c.states, transitions: c.transitions, depth: c.depth, frontier: r.complete ? 0 : (this.last?.frontier ?? 0), memory: c.memoryBytes, elapsedMs: c.elapsedMs });
    if (this.bar.isActive) this.bar.render();
  }

  /** Clears the bar's line; call it before anything else is written to the terminal. */
  stop(): void {
    this.bar.stop();
  }
}

const ZERO: Progress = { states: 0, transitions: 0, depth: 0, frontier: 0, memory: 0, elapsedMs: 0 };

