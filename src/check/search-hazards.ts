/**
 * Where the search's hazard detectors report: one hazard per (kind, subject, key), the first found
 * kept, at most {@link MAX_HAZARDS} in a sequential search; whether an error was found (the search
 * stops at the end of that depth unless `all`); and the lazy trace suffix of a transition, built
 * only when a hazard found on it is kept.
 */
import type { Choice } from '../machine/machine.js';
import { MAX_HAZARDS, type RawHazard } from './engine.js';

/**
 * The marker a detector on a transition passes as a hazard's `extra`: replaced when the hazard is
 * kept by the transition's trace suffix (the prefix of forced steps, then the choice taken).
 */
export const LAZY: Choice[] = [];

/** The hazards of one search (sequential, or one worker of the parallel search with `par`). */
export class HazardSink {
  /** The hazards kept, by key, in the order found. */
  readonly hazards = new Map<string, RawHazard>();
  /** Whether an error hazard was found (since the last {@link takeError} in a worker). */
  errorFound = false;
  /** Set while a random run reports (ExploreOptions.randomRuns): its hazards are marked `random`. */
  random = false;
  /** Parallel search: hazards found since the last {@link takeFresh} (no cap: the main thread keeps MAX_HAZARDS). */
  private fresh: RawHazard[] = [];
  private lazyPrefix: Choice[] = [];
  private lazyChoice: Choice = { kind: 'agent', agent: 0 };

  constructor(private readonly par: boolean) {}

  /** The transition that {@link LAZY} stands for from now on: forced steps `prefix`, then `c`. */
  lazyTrace(prefix: Choice[], c: Choice): void {
    this.lazyPrefix = prefix;
    this.lazyChoice = c;
  }

  /** Keeps `h` unless a hazard of its kind, subject and key is kept already (or the cap is reached). */
  report(h: RawHazard): void {
    // The subject is part of the key: `--all` lists every (kind, subject) reachable, whatever the
    // order the search met them in (the differential tests compare these sets across reductions).
    const key = `${h.kind}|${h.subject ?? ''}|${h.key}`;
    if (this.hazards.has(key) || (!this.par && this.hazards.size >= MAX_HAZARDS)) return;
    const extra = h.extra === LAZY ? [...this.lazyPrefix, this.lazyChoice] : h.extra;
    const raw: RawHazard = { ...h, extra, key };
    if (this.random) raw.random = true;
    this.hazards.set(key, raw);
    if (this.par) this.fresh.push(raw);
  }

  /** Reports `h` and notes that an error was found. */
  error(h: RawHazard): void {
    this.errorFound = true;
    this.report(h);
  }

  /** Hazards kept since the last call (parallel search). */
  takeFresh(): RawHazard[] {
    const r = this.fresh;
    this.fresh = [];
    return r;
  }

  /** Whether an error was found since the last call, and resets it (parallel search). */
  takeError(): boolean {
    const r = this.errorFound;
    this.errorFound = false;
    return r;
  }
}
