/**
 * The `mbsim` command line. Thin: it parses flags (commander), calls the library and renders. The
 * verbs are registered by `commands.ts`, which loads each verb's module (`run-verb.ts`,
 * `check-verb.ts`, …) only when that verb runs, so that a start loads little more than commander.
 * Exit codes: 0 ok, 1 a hazard was found (hang, trap, undefined behaviour), 2 bad input,
 * 3 incomplete (a bound stopped the work).
 */
import { CommanderError } from 'commander';
import { VERB_NAMES, VERBS } from './commands.js';
import { echo, refuseLineBreaks } from './args.js';
import { UsageError } from './errors.js';
import { errorDocument, wantsJson } from './error-json.js';
import { nodeIO, usageText, type IO, type VerbContext } from './io.js';
import { packageInfo } from './package-info.js';
import { safeIO } from './terminal.js';
import { MbsimCommand } from './unknown-option.js';

export type { IO } from './io.js';

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function main(argv: string[], given?: IO): Promise<number> {
  // Every line the CLI prints passes here: control and bidi characters become visible escapes.
  const io = safeIO(given ?? nodeIO());
  // When this is the process's CLI (no IO given), --timeout counts from the process's start
  // (`process.uptime()`: `performance.timeOrigin` would load perf_hooks, ~2 ms of every start).
  const started = given ? Date.now() : Date.now() - Math.max(0, process.uptime() * 1000);
  let code = 0;
  const ctx: VerbContext = { io, started, exit: (c) => (code = c) };
  // An unknown option's hint looks at every verb's options (registered then, on a scratch program).
  const program = new MbsimCommand(undefined, (scratch) => {
    for (const verb of VERBS) verb(scratch, ctx);
  });
  program
    .name('mbsim')
    .description('Simulate, check and show the mbarrier synchronization protocol of Hopper and Blackwell kernels.')
    .version(packageInfo().version)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s), outputError: (s, write) => write(`mbsim: ${s}`) })
    .showSuggestionAfterError(true);
  // A run names its verb first: only that verb is registered (its options are all this run parses;
  // registering the others is ~3 ms of every start). Anything else first (`--help`, `help`, a
  // mistyped verb) registers them all, for the full usage and commander's suggestions.
  const named = VERB_NAMES.indexOf(argv[0] as (typeof VERB_NAMES)[number]);
  for (const verb of named >= 0 ? [VERBS[named]!] : VERBS) verb(program, ctx);

  try {
    refuseLineBreaks(argv);
    // commander answers `help NAME` for an unknown NAME with the general help and exit code 0.
    if (argv[0] === 'help' && argv[1] !== undefined && !(VERB_NAMES as readonly string[]).includes(argv[1]) && argv[1] !== 'help') {
      throw new UsageError(`help: unknown command '${echo(argv[1])}' (the commands: ${VERB_NAMES.join(', ')})`);
    }
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // `mbsim` with no verb prints the usage on stderr: that is bad input (exit 2), not success.
      if (err.code === 'commander.help' && argv.length === 0) return 2;
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
      // commander already printed its one-line message
      if (wantsJson(argv)) io.out(JSON.stringify(errorDocument(new UsageError(err.message), argv[0]!), null, 2));
      return 2;
    }
    // Timing parameters validated where they are used (not only at load) are still bad input.
    if (err instanceof Error && !(err instanceof UsageError)) {
      const { TimingError } = await import('../sim/timing.js');
      if (err instanceof TimingError) err = new UsageError(`--timing: ${err.message}`);
    }
    if (err instanceof UsageError) {
      io.err(usageText(err));
      if (wantsJson(argv)) io.out(JSON.stringify(errorDocument(err, argv[0]!), null, 2));
      return err.exitCode === 3 ? 3 : 2;
    }
    throw err;
  }
}
