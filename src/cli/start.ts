/** Resident bytes from which the process leaves with process.exit once its output has drained (see below). */
const QUICK_EXIT_RSS = 128 * 1048576;

/**
 * The `mbsim` process: enables source maps (so kernels built with the TypeScript builder report
 * TypeScript lines) before loading the CLI, runs it and exits with its code. `bin.ts` calls it
 * (the unbundled CLI); the installed command runs it from the bundle (`bundle-bin.ts`).
 */
export function start(argv: string[]): void {
  process.setSourceMapsEnabled(true);
  // `mbsim run … | head` closes the pipe early: stop quietly instead of dying on EPIPE. Any other
  // failure to write the output (a full disk: `> /dev/full`) is one line and exit 2, as for an
  // output file that cannot be written.
  // An output that failed ends the process its own way (below), not with the CLI's code.
  let failed = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      failed = true;
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      if (stream !== process.stdout) process.exit(2);
      // The words for the code (errno.ts) are loaded only when an output fails.
      void import('./errno.js').then(({ errnoText }) => errnoText(err), () => err.code ?? err.message).then((why) => {
        try {
          process.stderr.write(`mbsim: error: cannot write the output: ${why}\n`);
        } catch {
          // stderr is gone too
        }
        process.exit(2);
      });
    });
  }
  const internal = (err: unknown) => {
    void import('./terminal.js').then(({ escapeControls }) => {
      process.stderr.write(`mbsim: internal error: ${escapeControls(String((err as Error)?.message ?? err))}\n  (this is a bug in mbsim; please report it with the command you ran)\n`);
      process.exit(70);
    });
  };
  import('./main.js').then(
    ({ main }) =>
      main(argv).then(
        // Set the exit code and let Node exit once stdout has drained (process.exit would cut piped
        // output). A process that holds much memory exits as soon as stdout and stderr have
        // drained instead: when the event loop empties Node first tears the heap down, a few
        // hundred ms after a run of hundreds of MB (issue 11). A small one ends as usual:
        // process.exit costs a 10-line check about 10 M instructions (~3 ms) more.
        (code) => {
          process.exitCode = code;
          if (process.memoryUsage.rss() < QUICK_EXIT_RSS) return;
          const leave = (err?: Error | null) => {
            if (!err && !failed) process.exit(code);
          };
          process.stdout.write('', (err) => (err ? undefined : process.stderr.write('', leave)));
        },
        internal,
      ),
    internal,
  );
}
