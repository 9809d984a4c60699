/**
 * The language server's checks, run in a worker thread so that the server keeps answering (hover,
 * definitions, diagnostics of new edits) while a check runs, and so that a check that overruns its
 * bounds can be stopped from outside: the search stops itself at its governor's deadline
 * (src/machine/governor.ts); if the whole job (parse, search, traces) still runs past
 * {@link hardDeadlineMs}, the thread is terminated and the next check starts a fresh one.
 *
 * One job runs at a time; a job waiting for the thread is replaced by a newer one for the same
 * document (it resolves with null). Where a worker thread cannot be started, the job runs in the
 * server's own thread.
 */
import { parentPort, Worker } from 'node:worker_threads';
import type { Diagnostic } from 'vscode-languageserver';
import { parseSketch } from '../lang/index.js';
import { rangeOf, SEVERITY } from './features.js';
import { CHECK_SOURCE, hazardDiagnostics, type HazardBounds } from './hazards.js';

/** One check: the document's text, its file name and URI, and the bounds. */
export interface CheckJob {
  text: string;
  file: string;
  uri: string;
  bounds: HazardBounds;
}

interface Queued extends CheckJob {
  done: (d: Diagnostic[] | null) => void;
}

/** The check of `job` in this thread: its hazards as diagnostics (none when the text does not parse). */
export function checkText(job: CheckJob): Diagnostic[] {
  const kernel = parseSketch(job.text, job.file).kernel;
  return kernel ? hazardDiagnostics(kernel, job.uri, job.bounds).diagnostics : [];
}

/** The worker side: answers each job posted to it with `{ diagnostics }` or `{ error }`. */
export function hazardWorkerMain(): void {
  parentPort?.on('message', (job: CheckJob) => {
    try {
      parentPort!.postMessage({ diagnostics: checkText(job) });
    } catch (err) {
      parentPort!.postMessage({ error: String((err as Error)?.stack ?? err) });
    }
  });
}

/** Milliseconds a job may run in all before its thread is terminated: twice the search's bound and 2 s. */
export function hardDeadlineMs(b: HazardBounds): number {
  return 2 * b.timeoutMs + 2000;
}

/** The diagnostic of a job that failed or was stopped from outside. */
function note(job: CheckJob, message: string): Diagnostic[] {
  const line = Math.max(1, job.text.split(/\r\n|\r|\n/).findIndex((l) => /^kernel\b/.test(l)) + 1);
  return [{ range: rangeOf({ line, col: 1, endCol: 7 }), severity: SEVERITY.information, code: 'incomplete', source: CHECK_SOURCE, message }];
}

/** See the file comment. */
export class CheckThread {
  private worker: Worker | null = null;
  private running: Queued | null = null;
  private queue: Queued[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Set once a worker could not be started or loaded: later jobs run in this thread. */
  private inline = false;
  /** Messages about the thread for the server's log. */
  constructor(private readonly log: (msg: string) => void = () => {}) {}

  /** Checks `job`; resolves with its diagnostics, or null when a newer job for the same document replaced it before it started. */
  run(job: CheckJob): Promise<Diagnostic[] | null> {
    return new Promise((done) => {
      for (const q of this.queue.filter((x) => x.uri === job.uri)) q.done(null);
      this.queue = this.queue.filter((x) => x.uri !== job.uri);
      this.queue.push({ ...job, done });
      this.next();
    });
  }

  /** Stops the thread (the server is exiting). */
  close(): void {
    void this.worker?.terminate();
    this.worker = null;
  }

  private next(): void {
    if (this.running || !this.queue.length) return;
    const job = (this.running = this.queue.shift()!);
    const w = this.inline ? null : this.start();
    if (!w) {
      // No worker thread: run here (the search's own bounds still hold).
      setImmediate(() => {
        let d: Diagnostic[];
        try {
          d = checkText(job);
        } catch (err) {
          this.log(`mbsim check failed on ${job.uri}: ${String((err as Error)?.stack ?? err)}`);
          d = note(job, `internal error of the checker: ${(err as Error)?.message ?? String(err)} (this is a bug in mbsim; please report it with the sketch)`);
        }
        this.finish(d);
      });
      return;
    }
    this.timer = setTimeout(() => {
      this.log(`mbsim check of ${job.uri} ran past ${hardDeadlineMs(job.bounds)} ms: thread terminated`);
      this.close();
      this.finish(note(job, `the editor's check ran past ${hardDeadlineMs(job.bounds)} ms and was stopped; run mbsim check for the full search`));
    }, hardDeadlineMs(job.bounds));
    const { done: _done, ...plain } = job;
    w.postMessage(plain);
  }

  private finish(d: Diagnostic[]): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const job = this.running;
    this.running = null;
    job?.done(d);
    this.next();
  }

  /** The worker thread, started if needed; null when none can be started. */
  private start(): Worker | null {
    if (this.worker) return this.worker;
    // This module's URL (TypeScript sources, tsc output), or in the bundled CLI the bundle's worker
    // entry next to the chunk this code is in (scripts/bundle.mjs, src/lsp/worker-entry.ts).
    const here = /\/check-thread\.[jt]s$/.test(import.meta.url) ? import.meta.url : new URL('./lsp-worker.js', import.meta.url).href;
    const hooks = here.endsWith('.ts') ? new URL('../../test/support/ts-hooks.mjs', here).href : null;
    const code = `const { workerData, parentPort } = require('node:worker_threads');
if (workerData.hooks) require('node:module').register(workerData.hooks);
import(workerData.entry).then((m) => m.hazardWorkerMain(), (e) => parentPort.postMessage({ loadError: String((e && e.stack) || e) }));`;
    try {
      const w = new Worker(code, { eval: true, workerData: { entry: here, hooks } });
      w.unref();
      w.on('message', (m: { diagnostics?: Diagnostic[]; error?: string; loadError?: string }) => {
        if (this.worker !== w) return; // a thread already given up
        if (m.loadError !== undefined) {
          this.log(`the check thread could not load (${m.loadError}); checks run in the server's thread`);
          this.inline = true;
          this.close();
          const job = this.running;
          this.running = null;
          if (job) this.queue.unshift(job);
          this.next();
          return;
        }
        if (m.error !== undefined) {
          this.log(`mbsim check failed: ${m.error}`);
          if (this.running) this.finish(note(this.running, `internal error of the checker: ${m.error.split('\n')[0]} (this is a bug in mbsim; please report it with the sketch)`));
          return;
        }
        this.finish(m.diagnostics ?? []);
      });
      w.on('error', (err) => {
        if (this.worker !== w) return;
        this.log(`the check thread failed: ${String(err?.stack ?? err)}`);
        this.worker = null;
        if (this.running) this.finish(note(this.running, `the check thread failed: ${err?.message ?? String(err)}`));
      });
      this.worker = w;
      return w;
    } catch (err) {
      this.log(`no check thread (${String((err as Error)?.message ?? err)}); checks run in the server's thread`);
      this.inline = true;
      return null;
    }
  }
}
