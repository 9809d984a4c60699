/**
 * Ctrl-C during `mbsim check`: the search is synchronous, so while it runs on the main thread
 * Node's signal handlers cannot run (a SIGINT would be seen only once the search returned). A
 * check that outlives a first try on the main thread ({@link PROBE_MS}) is therefore run
 * again in a worker thread, the main thread waiting on its event loop: its SIGINT / SIGTERM
 * handler sets a flag in a SharedArrayBuffer, which the search's governor reads at its periodic
 * bound checks (`check`'s `stop`, src/machine/governor.ts `Limits.interrupt`), so the search stops
 * there and reports what it explored, as a timeout stops it. The worker builds the report
 * (src/cli/check-thread-worker.ts) and sends its text, JSON and output files here, where they are
 * written through the process's own IO (the atomic writes of src/cli/output.ts).
 *
 * A check that ends within the first try never starts a thread (a 10-line sketch stays as fast as
 * before); a second signal ends the process at once, as the signal asks.
 */
import { Worker, type MessagePort } from 'node:worker_threads';
import type { CheckCliOptions, CheckIO, CheckOptions, CheckResult, runCheckCli } from '../check/index.js';
import type { Program } from '../machine/program.js';
import { fullCollection } from './budget.js';
import { UsageError, type ErrorLoc } from './errors.js';
import { WriteInterrupted } from './output.js';

/**
 * How long (ms) a check runs on the main thread before it is run again in a worker thread, where
 * Ctrl-C can stop it. At 200 ms the check of examples/pipeline.mbk (0.07–0.11 s of search alone)
 * passed it on a loaded 2-core machine and paid the thread's start (the command's median wall time
 * went from 0.55 s to 1.1 s); a Ctrl-C in the first second waits for the try's end.
 */
export const PROBE_MS = 1000;

/** The exit code of a command stopped by `signal`: 128 + its number (130 for SIGINT, 143 for SIGTERM). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? 143 : signal === 'SIGHUP' ? 129 : 130;
}

/**
 * The signals a check listens for while it runs: the first sets {@link Interrupt.flag} (and
 * {@link Interrupt.signal}); a second ends the process at once, as the signal asks.
 */
export interface Interrupt {
  /** Element 0 is set to 1 by the first signal (a SharedArrayBuffer: the worker's search reads it). */
  readonly flag: Int32Array;
  /** The first signal, or null. */
  signal: NodeJS.Signals | null;
  /** Removes the listeners. */
  release(): void;
}

/** Listens for SIGINT and SIGTERM until {@link Interrupt.release}. */
export function listenInterrupt(): Interrupt {
  const it: Interrupt = {
    flag: new Int32Array(new SharedArrayBuffer(4)),
    signal: null,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (it.signal === null) {
      it.signal = signal;
      Atomics.store(it.flag, 0, 1);
      return;
    }
    it.release();
    process.kill(process.pid, signal);
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return it;
}

/** Resolves after the event loop has run once: a signal that came while the main thread was busy has been handled. */
export function turnLoop(): Promise<void> {
  return new Promise((done) => setImmediate(() => setImmediate(done)));
}

/** What the worker thread needs to run a check (all of it structured-clonable). */
export interface ThreadJob {
  kernel: Program['kernel'];
  params: Program['params'];
  lockstep: boolean;
  /** The CLI's options (`timeoutMs` is replaced by what is left until `deadline`). */
  opts: CheckCliOptions;
  /** When the check's time runs out (ms since the epoch): the thread's start counts in it. */
  deadline: number;
  color: boolean;
  /** The progress bar's terminal (absent: no bar). */
  progress?: { isTTY: true; columns: number };
  /** The interrupt flag's buffer ({@link Interrupt.flag}). */
  stop: SharedArrayBuffer;
  /** The entry of the module (TypeScript sources: the hooks that load them). */
  entry: string;
  hooks: string | null;
}

/** A message of the worker thread, in the order its check wrote. */
export type FromThread =
  | { t: 'out' | 'err' | 'bar'; s: string }
  | { t: 'json'; value: unknown }
  | { t: 'write'; path: string; data: string }
  | { t: 'done'; code: number }
  | { t: 'usage'; message: string; brief?: string; code?: string; loc?: ErrorLoc }
  | { t: 'error'; message: string };

/** The worker thread's entry: this folder's module (sources, tsc output) or, in the bundle, `check-thread.js` next to the chunk (scripts/bundle.mjs). */
function entryOf(): { entry: string; hooks: string | null } {
  const own = /\/check-thread\.([jt]s)$/.exec(import.meta.url);
  const entry = own ? new URL(`./check-thread-worker.${own[1]}`, import.meta.url).href : new URL('./check-thread.js', import.meta.url).href;
  return { entry, hooks: entry.endsWith('.ts') ? new URL('../../test/support/ts-hooks.mjs', entry).href : null };
}

/**
 * Runs the check of `program` in a worker thread (see the file comment), until `deadline` (ms
 * since the epoch) at most, and writes what it
 * reports through `io`, in order; resolves with its exit code. Rejects with the worker's
 * {@link UsageError} (bad input found by the check), an output file's error, or an Error when
 * the thread fails.
 */
export async function checkInThread(program: Program, opts: CheckCliOptions, deadline: number, io: CheckIO, it: Interrupt): Promise<number> {
  const job: ThreadJob = {
    kernel: program.kernel, params: program.params, lockstep: program.lockstep, opts, deadline, color: io.color, stop: it.flag.buffer as SharedArrayBuffer,
    ...(io.progress?.isTTY === true && !opts.json && !opts.quiet ? { progress: { isTTY: true as const, columns: io.progress.columns ?? 80 } } : {}),
    ...entryOf(),
  };
  const code = `const { workerData, parentPort } = require('node:worker_threads');
if (workerData.hooks) require('node:module').register(workerData.hooks);
import(workerData.entry).then((m) => m.checkThreadMain(workerData, parentPort), (e) => parentPort.postMessage({ t: 'error', message: String((e && e.stack) || e) }));`;
  const w = new Worker(code, { eval: true, workerData: job });
  try {
    return await drainThread(w, io);
  } finally {
    void w.terminate();
  }
}

/** Writes the worker's messages through `io` one after another until its `done`. */
function drainThread(w: Worker, io: CheckIO): Promise<number> {
  return new Promise((resolve, reject) => {
    let chain = Promise.resolve();
    let settled = false;
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    const handle = async (m: FromThread): Promise<void> => {
      if (settled) return;
      switch (m.t) {
        case 'out': io.out(m.s); break;
        case 'err': io.err(m.s); break;
        case 'bar': io.progress?.write(m.s); break;
        case 'json': await (io.outJson ? io.outJson(m.value) : io.out(JSON.stringify(m.value))); break;
        case 'write':
          if (!io.writeFile) throw new Error('checkInThread: io.writeFile is needed to write --sarif or --trace');
          await io.writeFile(m.path, m.data);
          break;
        case 'usage': {
          const err = new UsageError(m.message, m.brief);
          if (m.code !== undefined) err.withCode(m.code);
          throw m.loc ? err.withLoc(m.loc) : err;
        }
        case 'error': throw new Error(`the check thread failed: ${m.message}`);
        case 'done':
          settled = true;
          resolve(m.code);
          break;
      }
    };
    w.on('message', (m: FromThread) => {
      chain = chain.then(() => handle(m)).catch(fail);
    });
    w.on('error', (e) => {
      chain = chain.then(() => fail(e));
    });
    w.on('exit', () => {
      chain = chain.then(() => fail(new Error('the check thread ended without a result')));
    });
  });
}

/** Thrown out of the first try's check to hand the search to the worker thread. */
const HANDOFF = Symbol('handoff');

/**
 * Runs `command` (a `mbsim check`) listening for SIGINT and SIGTERM ({@link listenInterrupt}) from
 * its start, the loading of the kernel included. Returns its exit code, or 130 / 143 once a signal
 * came ({@link signalExitCode}); an output file whose write a signal stopped is left as it was,
 * its message printed with `err`.
 */
export async function withInterrupt(err: (s: string) => void, command: (it: Interrupt) => Promise<number>): Promise<number> {
  const it = listenInterrupt();
  try {
    const code = await command(it);
    return it.signal ? signalExitCode(it.signal) : code;
  } catch (e) {
    if (it.signal === null || !(e instanceof WriteInterrupted)) throw e;
    err(`mbsim: ${e.message}`);
    return signalExitCode(it.signal);
  } finally {
    it.release();
  }
}

/**
 * `mbsim check` of `program` that the interrupt `it` stops with the partial result (see the file
 * comment): the check on this thread for {@link PROBE_MS} at most (all of it when its time is not
 * much more, or other bounds end it first); if that try stopped at its own time bound, the check
 * again in a worker thread with the time left. `run` is the check itself, `runCli` the CLI's
 * report of it ({@link runCheckCli}); `timeoutMs`: the whole check's time (the CLI's default when
 * `opts.timeoutMs` is absent). With `workers` > 1 the worker thread runs it from the start.
 * Returns the check's exit code ({@link withInterrupt} makes it 130 / 143 after a signal).
 */
export async function checkInterruptible(
  program: Program, opts: CheckCliOptions, io: CheckIO, run: (co: CheckOptions) => CheckResult, runCli: typeof runCheckCli, timeoutMs: number, it: Interrupt,
): Promise<number> {
  const t0 = Date.now();
  // A signal that came while the kernel was loaded: the check stops at once.
  await turnLoop();
  if ((opts.workers ?? 1) <= 1) {
    if (timeoutMs <= 2 * PROBE_MS) return runCli(program, opts, io, (co) => run({ ...co, stop: it.flag }));
    let tried: CheckResult | null = null;
    try {
      return await runCli(program, opts, io, (co) => {
        // The random runs start when the whole check's bound says (a fifth of it), not a fifth of the try's.
        const rr = co.randomRuns ?? true;
        const randomRuns = rr === false || (rr !== true && (rr.afterMs !== undefined || rr.from !== undefined)) ? rr : { ...(rr === true ? {} : rr), afterMs: timeoutMs / 5 };
        const r = run({ ...co, timeout: PROBE_MS, stop: it.flag, randomRuns });
        if (r.stoppedBy !== 'timeout') return r;
        tried = r;
        throw HANDOFF;
      });
    } catch (e) {
      if (e !== HANDOFF) throw e;
    }
    await turnLoop();
    if (it.signal !== null && tried !== null) {
      const r: CheckResult = tried;
      r.stoppedBy = 'interrupt';
      return runCli(program, opts, io, () => r);
    }
    // What the first try left is garbage: collected before the thread's search reads the resident set.
    fullCollection()?.();
  }
  return checkInThread(program, opts, t0 + timeoutMs, io, it);
}

/** The port a worker thread posts to (node:worker_threads `parentPort`). */
export type ThreadPort = Pick<MessagePort, 'postMessage'>;
