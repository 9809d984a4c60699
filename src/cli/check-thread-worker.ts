/**
 * The worker thread of a `mbsim check` that Ctrl-C can stop (src/cli/check-thread.ts): it
 * instantiates the kernel (a Program holds closures: the Kernel IR and its parameters travel),
 * runs the check with the main thread's interrupt flag as its `stop`, and builds the report with
 * {@link runCheckCli}, sending every piece of output to the main thread in order, which writes it.
 * The bundle builds it as `check-thread.js` (scripts/bundle.mjs).
 */
import { runCheckCli, type CheckIO, type ProgressStream } from '../check/index.js';
import { check } from '../check/check.js';
import { setCollector } from '../machine/governor.js';
import { instantiate } from '../machine/program.js';
import { fullCollection } from './budget.js';
import type { FromThread, ThreadJob, ThreadPort } from './check-thread.js';
import { UsageError } from './errors.js';
import { paintFor } from './io.js';
import { checkMissingParams } from './missing-param.js';

/** Runs `job` (see the file comment) and posts its output, then `done` with the exit code, to `port`. */
export async function checkThreadMain(job: ThreadJob, port: ThreadPort): Promise<void> {
  const post = (m: FromThread) => port.postMessage(m);
  try {
    // As on the main thread (check-verb.ts): collect garbage before reading memory near --max-memory.
    setCollector(() => fullCollection()?.());
    const program = instantiate(job.kernel, job.params, { lockstep: job.lockstep });
    const stop = new Int32Array(job.stop);
    const progress: ProgressStream | undefined = job.progress ? { isTTY: true, columns: job.progress.columns, write: (s) => (post({ t: 'bar', s }), true) } : undefined;
    const io: CheckIO = {
      out: (s) => post({ t: 'out', s }),
      err: (s) => post({ t: 'err', s }),
      color: job.color,
      paint: paintFor({ color: job.color, out: () => {}, err: () => {} }),
      outJson: (value) => post({ t: 'json', value }),
      writeFile: async (path, data) => post({ t: 'write', path, data }),
      ...(progress ? { progress } : {}),
    };
    // The time left: the thread's start and the instantiation count in the check's time.
    const opts = { ...job.opts, timeoutMs: Math.max(1, job.deadline - Date.now()) };
    const code = await runCheckCli(program, opts, io, (co) => {
      const r = check(program, { ...co, stop });
      const err = checkMissingParams(r);
      if (err) throw err;
      return r;
    });
    post({ t: 'done', code });
  } catch (err) {
    if (err instanceof UsageError) post({ t: 'usage', message: err.message, ...(err.brief !== undefined ? { brief: err.brief } : {}), ...(err.code !== undefined ? { code: err.code } : {}), ...(err.loc ? { loc: err.loc } : {}) });
    else post({ t: 'error', message: String((err as Error)?.stack ?? err) });
  }
}
