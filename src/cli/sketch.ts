/**
 * Loads a sketch file (`.mbk`). The sketch language lives in `src/lang/`; until it is wired in,
 * this reports that sketch files are not supported yet.
 */
import type { Kernel } from '../kernel/ir.js';
import { UsageError } from './load.js';

/** Parses the sketch at `path`; reports every diagnostic as a {@link UsageError}. */
export function loadSketchFile(path: string): Kernel {
  throw new UsageError(`${path}: sketch files are not supported by this build yet; run a built-in example`);
}
