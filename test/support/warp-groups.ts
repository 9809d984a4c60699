/**
 * The symmetry groups and warp-relative live slots of a PTX kernel as one JSON string, in any
 * thread: test/check-warp-relative.test.ts compares the main thread's with worker threads' of
 * different stack sizes (the analysis must not depend on the stack).
 */
import { readFileSync } from 'node:fs';
import { workerData, parentPort } from 'node:worker_threads';
import { analyse } from '../../src/check/analysis.js';
import { instantiate } from '../../src/machine/program.js';
import { parsePtx } from '../../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../../src/ptxi/index.js';

/** `{groups, live}` of `file` under `launch`: each group's agents, each agent's live-slot counts per rest position. */
export function groupsOf(file: string, launch: PtxLaunch): string {
  const r = parsePtx(readFileSync(file, 'utf8'), file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  const an = analyse(instantiate(translatePtx(r.module, launch).kernel));
  const live = an.rel.map((x) => (x ? x.live.flatMap((l, pc) => (l ? [`${pc}:${l.join('.')}`] : [])).join(' ') : null));
  return JSON.stringify({ groups: an.groups.map((g) => g.agents), live });
}

/** Worker entry: posts {@link groupsOf} of `workerData`. */
export function workerMain(): void {
  const d = workerData as { file: string; launch: PtxLaunch };
  parentPort!.postMessage(groupsOf(d.file, d.launch));
}
