/** The PTX trials' kernels (test/fixtures/ptx/trial, committed PTX of the project's own CUDA): parsed, translated for `launch`, instantiated. */
import { readFileSync } from 'node:fs';
import { instantiate } from '../../src/machine/program.js';
import { parsePtx } from '../../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../../src/ptxi/index.js';

export const TRIAL_DIR = 'test/fixtures/ptx/trial';

/** The program of trial file `f` (relative to {@link TRIAL_DIR}) under `launch`; a parse error throws. */
export function trialProgram(f: string, launch: PtxLaunch) {
  const r = parsePtx(readFileSync(`${TRIAL_DIR}/${f}`, 'utf8'), f);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
