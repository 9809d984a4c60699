/**
 * The verbs of the `mbsim` command line as commander registers them: names, arguments, options and
 * their parsers. Light on purpose, since every start loads it: each action loads what its verb
 * runs (`run-verb.ts`, `check-verb.ts`, the examples, the decoder, the PTX tools, the explorer's
 * server, the language server) only when that verb is the one called.
 */
import { Option } from 'commander';
import { ECHO_MAX, echo, parseCountArg, parseIntArg, parsePositiveArg, parseSecondsArg } from './args.js';
import { UsageError } from './errors.js';
import type { Verb } from './io.js';
import { addPtxFlags, isPtx, refusePtxFlags, type PtxFlags } from './ptx-flags.js';
import { parseSet } from './set-arg.js';
import type { CheckOpts } from './check-verb.js';
import type { RunOpts } from './run-verb.js';

/** Registers `mbsim run`. */
export const runCommand: Verb = (program, ctx) => {
  const cmd = program
    .command('run')
    .description('simulate a kernel with the H200 timing model: timeline, ledger, summary')
    .argument('<kernel>', 'a built-in example name (see `mbsim examples`), a sketch file or a PTX file (with its launch flags)')
    .option('--set <NAME=VALUE>', 'override a parameter (repeatable)', (v: string, acc?: Record<string, number>) => parseSet(v, acc))
    .option('--trace <FILE>', 'write a Chrome trace-event JSON for Perfetto')
    .option('--json', 'print everything as JSON')
    .option('--timing <FILE>', 'JSON file overriding timing parameters, e.g. {"tmaLatency": 300} (names: docs/HARDWARE.md, "Timing parameters and their sources")')
    .option('--seed <N>', 'jitter asynchronous latencies with this seed (0..4294967295)', (v: string) => {
      const n = parseIntArg('--seed')(v);
      if (n < 0 || n > 0xffffffff) throw new UsageError(`--seed ${v} is outside 0..4294967295`);
      return n;
    })
    .addOption(new Option('--width <N>', 'timeline width in columns').default(96).argParser(parsePositiveArg('--width')))
    .option('--events', 'print every event and the whole ledger')
    .addOption(new Option('--max-steps <N>', 'stop the simulation after N machine steps (verdict incomplete, exit 3)').default(500_000).argParser(parsePositiveArg('--max-steps')))
    .addOption(new Option('--grid <N>', 'the launch has N CTAs like the simulated ones (one is simulated; up to the GPU\'s SMs share L2/HBM bandwidth)').argParser(parsePositiveArg('--grid')))
    .addOption(new Option('--active-sms <N>', 'SMs copying at the same time for the shared L2/HBM bandwidth model').argParser(parsePositiveArg('--active-sms')))
    .option('--omit <FIELDS>', 'with --json: leave out these fields (comma-separated: events, spans, ledger)')
    .option('--timeout <SECONDS>', 'stop the simulation after this many seconds (verdict incomplete, exit 3; default none)', parseSecondsArg('--timeout'))
    .addOption(new Option('--max-memory <MB>', 'stop the simulation before the process holds this much memory, mbsim\'s own 50–70 MB included (verdict incomplete, exit 3; a value mbsim already holds is refused, exit 2)').default(2048).argParser(parsePositiveArg('--max-memory')))
    .option('--phase-table <ROLE:BARRIER:VAR>', 'print the phase-tracking table of ROLE\'s parity waits on barrier array BARRIER; VAR is the role\'s variable holding the phase parity those waits wait for, not the loop index (the phase-tracking example: consumer:tma_bar:phase_tma)');
  addPtxFlags(cmd, false)
    .action(async (target: string, o: RunOpts) => {
      o.set ??= {};
      const { runVerb } = await import('./run-verb.js');
      ctx.exit(await runVerb(target, o, ctx.io, ctx.started));
    });
};

/** Registers `mbsim check`. */
export const checkCommand: Verb = (program, ctx) => {
  const cmd = program
    .command('check')
    .description('explore every schedule and completion order: hangs, races, phase bugs, with shortest counterexamples')
    .argument('<kernel>', 'a built-in example name, a sketch file or a PTX file (with its launch flags)')
    .option('--set <NAME=VALUE>', 'override a parameter (repeatable)', (v: string, acc?: Record<string, number>) => parseSet(v, acc))
    .option('--sweep <NAME=A..B>', 'check every combination of parameter ranges and print a table of verdicts (repeatable)', (v: string, acc: string[] = []) => (acc.push(v), acc))
    .option('--json', 'print the result as JSON (schema mbsim.check/1, docs/CHECK.md)')
    .option('--sarif <FILE>', 'also write the hazards as SARIF 2.1.0')
    .option('--trace <FILE>', 'write the first counterexample as a Chrome trace-event JSON for Perfetto')
    .option('--max-states <N>', 'stop after this many states (verdict incomplete; default 5,000,000)', parsePositiveArg('--max-states'))
    .option('--timeout <SECONDS>', 'stop after this many seconds, counted from the command\'s start; a --sweep\'s whole table within them (verdict incomplete; default 60)', parseSecondsArg('--timeout'))
    .option('--max-memory <MB>', 'stop when the process holds about this much memory: its resident set, mbsim\'s own 50–70 MB included (verdict incomplete; default 2048; a value mbsim already holds is refused, exit 2)', parsePositiveArg('--max-memory'))
    .option('--all', 'keep exploring after the first hazard to report every kind that is reachable')
    .option('--strict', 'PTX\'s proxy rule in full: cross-proxy write-after-read (generic reads of a buffer, then a TMA overwrite ordered only by an mbarrier hand-off, no fence.proxy.async) becomes a race error, and a remote arrive without a scope a scope warning')
    .option('--workers <N>', 'explore with N worker threads (same result; default 1)', parsePositiveArg('--workers'))
    .addOption(new Option('--reduce <WHICH>', 'reductions to use: all (default), por (partial-order only), symmetry (only), none (the plain search, to confirm a surprising verdict)').choices(['all', 'por', 'symmetry', 'none']).default('all'))
    .option('--no-cta-symmetry', 'keep the symmetry between warps but do not identify states that differ by a permutation of the cluster\'s CTA ranks (docs/CHECK.md)')
    .option('--all-trips <NAME>', 'one verdict for every value of trip parameter NAME (k-iterations, tiles) from 1 on: the loops it bounds are searched until their steady state, then every last trip (docs/CHECK.md, "Every trip count")')
    .option('--no-random-runs', 'only the exhaustive search: no random schedules followed beside it once it has 20,000 states or a fifth of --timeout has passed (they find hazards a bounded search cannot reach; docs/CHECK.md)')
    .addOption(new Option('--format <FORMAT>', 'text (the report with traces), short (one line per finding: file:line:col: error[kind]: message) or json').choices(['text', 'short', 'json']).default('text'))
    .option('--max-traces <N>', 'print the shortest traces of the first N findings, the others without (default 3)', parseCountArg('--max-traces'))
    .option('--quiet', 'print nothing (no report, no progress bar): the exit code says the verdict; --sarif and --trace files are still written')
    .option('--watch', 'check the sketch file again each time it is saved (Ctrl-C to stop)');
  addPtxFlags(cmd, true)
    .action(async (target: string, o: CheckOpts) => {
      o.set ??= {};
      o.sweep ??= [];
      const { checkVerb, watchVerb } = await import('./check-verb.js');
      ctx.exit(o.watch ? await watchVerb(target, o, ctx.io) : await checkVerb(target, o, ctx.io, ctx.started));
    });
};

/** Registers `mbsim examples`. */
export const examplesCommand: Verb = (program, { io }) => {
  program
    .command('examples')
    .description('list the built-in examples')
    .action(async () => {
      const { EXAMPLES } = await import('../examples/index.js');
      const w = Math.max(...EXAMPLES.map((e) => e.name.length));
      for (const e of EXAMPLES) io.out(`${e.name.padEnd(w)}  ${e.summary}`);
    });
};

/** Registers `mbsim decode`. */
export const decodeCommand: Verb = (program, { io }) => {
  program
    .command('decode')
    .description('explain raw mbarrier words (16 hex digits) or arrive tokens (8 hex digits)')
    .argument('<hex...>', 'words or tokens, e.g. 0x7ffff3fe001ffffa or 7fffd800')
    .action(async (hexes: string[]) => {
      const { DecodeError, explainWord } = await import('../report/decode.js');
      const out: string[] = [];
      for (const h of hexes) {
        try {
          // A word has 16 hex digits (a token 8): a longer argument is echoed cut short.
          if (h.length > ECHO_MAX) throw new UsageError(`decode: '${echo(h)}' is not a 64-bit word (16 hex digits) or a 32-bit token (8 hex digits)`);
          out.push(explainWord(h).lines.join('\n'));
        } catch (err) {
          if (err instanceof DecodeError) throw new UsageError(err.message);
          throw err;
        }
      }
      io.out(out.join('\n\n'));
    });
};

/** Whether the file at `path` reads as a sketch (false when it cannot be read: the PTX reader says why). */
async function sketchText(path: string): Promise<boolean> {
  const { readInput } = await import('./input.js');
  const { looksLikeSketch } = await import('./sniff.js');
  try {
    return looksLikeSketch(readInput(path, 'file', 1 << 16).text);
  } catch {
    return false;
  }
}

/** Registers `mbsim info` (the PTX parser is loaded when it runs; a sketch is listed too). */
export const infoCommand: Verb = (program, { io }) => {
  program
    .command('info')
    .description("list a PTX module's kernels and functions (parameters, header directives, instruction counts) or what a sketch declares")
    .argument('<file.ptx|file.mbk>', 'PTX as nvcc -ptx writes it, or a sketch')
    .action(async (path: string) => {
      if (path.trim() === '') throw new UsageError('info needs a file name');
      // A sketch is recognised (by its extension, or a `kernel` line and no PTX directive) and listed as one.
      const { isPtx } = await import('./ptx-flags.js');
      if (!isPtx(path) && (/\.mbk$/i.test(path) || (await sketchText(path)))) {
        const { sketchInfo } = await import('./sketch-info.js');
        io.out(sketchInfo(path).join('\n'));
        return;
      }
      const { loadPtxFile, ptxInfo } = await import('./ptx-info.js');
      io.out(ptxInfo(loadPtxFile(path, io.err).module).join('\n'));
    });
};

/** Registers `mbsim serve` (a sketch, or a PTX file with its launch as for `run` and `check`). */
export const serveCommand: Verb = (program, ctx) => {
  const cmd = program
    .command('serve')
    .description('serve the interactive explorer on localhost (the engine runs in your browser)')
    .argument('[file]', 'a sketch file (.mbk) or a PTX file (.ptx, with its launch as for run and check) to open')
    .addOption(new Option('--port <N>', 'port to listen on').default(5177).argParser(parseIntArg('--port')));
  addPtxFlags(cmd, true);
  cmd
    .addHelpText('after', `
A sketch is served even with errors: the page shows them at their lines and you fix them in its editor.
A PTX file must parse and its launch must hold first (mbsim resolves the launch against the parsed module,
as run and check do): a PTX syntax error is refused with exit 2 at file:line:col; once served, the PTX
text can be edited in the page too.`)
    .action(async (file: string | undefined, o: { port: number } & PtxFlags) => {
      const { inputProblem } = await import('./input.js');
      if (file !== undefined && file.trim() === '') throw new UsageError('serve needs a file name (or none, for the built-in examples)');
      const why = file === undefined ? null : inputProblem(file);
      if (why === 'no such file') throw new UsageError((await import('./load.js')).noSuchFile(file!, process.cwd(), isPtx(file!) ? 'PTX file' : 'sketch file'));
      if (why) throw new UsageError(`${echo(file!)} is not a file (give a sketch file, .mbk, or a PTX file, .ptx; ${why.replace(/, not a regular file$/, '')})`);
      if (o.port < 0 || o.port > 65535) throw new UsageError(`--port ${o.port} is outside 0..65535`);
      // A PTX file: its launch (sidecars under the flags) is checked now as run and check do (exit
      // 2 at file:line:col), and again whenever the page asks for the file.
      const ptx = file !== undefined && isPtx(file);
      const ptxLoad = ptx ? await import('./ptx-load.js') : null;
      if (ptxLoad) {
        // A parameter the kernel needs from its start and the launch does not give is refused as
        // check and run refuse it (exit 2, one line naming the flag), before the server listens.
        const kernel = ptxLoad.loadPtxKernel(file!, o);
        const [{ instantiateOrExplain }, { staticMissingParams }] = await Promise.all([import('./load.js'), import('./missing-param.js')]);
        const missing = staticMissingParams(instantiateOrExplain(kernel, {}, file!));
        if (missing) throw missing;
      } else refusePtxFlags(o, true);
      const { startServer } = await import('../web/server/serve.js');
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        server = await startServer({ port: o.port, ...(file !== undefined ? { file } : {}), ...(ptxLoad ? { ptxLaunch: (text: string) => ptxLoad.servedPtxLaunch(file!, o, text) } : {}) });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'EADDRINUSE') throw new UsageError(`port ${o.port} is in use; pick another with --port`);
        if (e.code === 'EACCES' || e.code === 'EPERM') throw new UsageError(`port ${o.port}: permission denied (${e.code}; ports below 1024 need privileges); pick another with --port`);
        throw new UsageError(e.message.includes('no built explorer') ? 'the explorer is not built: run `npm run build:web` (npm ci does it)' : e.message);
      }
      ctx.io.out(`mbsim explorer at ${server.url}${file ? ` (opening ${file})` : ''} — Ctrl-C to stop`);
      await new Promise<void>((done) => {
        const stop = () => {
          void server.close().then(done);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
};

/** Registers `mbsim lsp`. */
export const lspCommand: Verb = (program, ctx) => {
  program
    .command('lsp')
    .description('run the language server for sketch files (LSP over stdio): diagnostics, hazards, hover, go to definition (docs/EDITOR.md)')
    .option('--stdio', 'talk LSP over stdin/stdout (the default and only transport; editors pass it)')
    .option('--check-timeout <SECONDS>', 'bound of each check the server runs (default 2)', parseSecondsArg('--check-timeout'))
    .option('--max-states <N>', 'states each check may explore (default 200,000)', parsePositiveArg('--max-states'))
    .option('--max-memory <MB>', 'stop a check before the server holds this much memory (default 1024)', parsePositiveArg('--max-memory'))
    .option('--no-check-on-change', 'check only on open and save, not after a pause in typing')
    .action(async (o: { checkTimeout?: number; maxStates?: number; maxMemory?: number; checkOnChange: boolean }) => {
      // Typed into a terminal, the server would wait silently for JSON-RPC: say what it is (stderr, which LSP leaves free).
      if (process.stdin.isTTY) ctx.io.err('mbsim lsp: a language server; it talks LSP (JSON-RPC) over stdin/stdout with an editor, which starts it (docs/EDITOR.md). Ctrl-C to stop.');
      const { startLanguageServer, DEFAULT_HAZARD_BOUNDS } = await import('../lsp/index.js');
      // The rule of check's --max-memory below the resident set (every check stopped by max-memory at
      // once), refused here: a server that can never check is a usage error, not a quiet editor.
      const held = process.memoryUsage.rss();
      if (o.maxMemory !== undefined && o.maxMemory * 1048576 <= held) {
        throw new UsageError(`--max-memory ${o.maxMemory} MB is below what the server holds once started (${Math.ceil(held / 1048576)} MB): every check would stop at once; give more (the default is ${DEFAULT_HAZARD_BOUNDS.maxMemory / 1048576})`);
      }
      const code = await startLanguageServer({
        bounds: {
          timeoutMs: o.checkTimeout !== undefined ? Math.max(1, Math.round(o.checkTimeout * 1000)) : DEFAULT_HAZARD_BOUNDS.timeoutMs,
          maxStates: o.maxStates ?? DEFAULT_HAZARD_BOUNDS.maxStates,
          maxMemory: o.maxMemory !== undefined ? o.maxMemory * 1024 * 1024 : DEFAULT_HAZARD_BOUNDS.maxMemory,
        },
        ...(o.checkOnChange ? {} : { checkDelayMs: null }),
      });
      // After `exit` nothing more is read: an editor that keeps the pipe open must not keep the server alive.
      process.stdin.destroy();
      ctx.exit(code);
    });
};

/** The verbs in the order `mbsim --help` lists them. */
export const VERBS: Verb[] = [runCommand, checkCommand, examplesCommand, decodeCommand, infoCommand, serveCommand, lspCommand];
/** Their names, in the same order. */
export const VERB_NAMES = ['run', 'check', 'examples', 'decode', 'info', 'serve', 'lsp'] as const;
