#!/usr/bin/env node
/**
 * The `mbsim` executable: enables source maps (so kernels built with the TypeScript builder report
 * TypeScript lines) before loading the CLI, runs it and exits with its code.
 */
import { errnoText } from './errno.js';

process.setSourceMapsEnabled(true);
// `mbsim run … | head` closes the pipe early: stop quietly instead of dying on EPIPE. Any other
// failure to write the output (a full disk: `> /dev/full`) is one line and exit 2, as for an
// output file that cannot be written.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (stream === process.stdout) {
      try {
        process.stderr.write(`mbsim: error: cannot write the output: ${errnoText(err)}\n`);
      } catch {
        // stderr is gone too
      }
    }
    process.exit(2);
  });
}
const { main } = await import('./main.js');
const { escapeControls } = await import('./terminal.js');

main(process.argv.slice(2)).then(
  // Set the exit code and let Node exit once stdout has drained (process.exit would cut piped output).
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mbsim: internal error: ${escapeControls(String((err as Error)?.message ?? err))}\n  (this is a bug in mbsim; please report it with the command you ran)\n`);
    process.exit(70);
  },
);
