/**
 * `mbsim serve`: the explorer's static server on 127.0.0.1 (src/web/server/serve.ts), until
 * Ctrl-C; and `mbsim lsp`: the language server of sketches over stdio (src/lsp/).
 */
import { Option } from 'commander';
import { parseIntArg, parsePositiveArg, parseSecondsArg, echo } from './args.js';
import { inputProblem } from './input.js';
import type { Verb } from './io.js';
import { UsageError } from './load.js';

/** Registers `mbsim serve`. */
export const serveCommand: Verb = (program, ctx) => {
  program
    .command('serve')
    .description('serve the interactive explorer on localhost (the engine runs in your browser)')
    .argument('[file]', 'a sketch file (.mbk) to open')
    .addOption(new Option('--port <N>', 'port to listen on').default(5177).argParser(parseIntArg('--port')))
    .action(async (file: string | undefined, o: { port: number }) => {
      const why = file === undefined ? null : inputProblem(file);
      if (why === 'no such file') throw new UsageError(`no such file: ${echo(file!)}`);
      if (why) throw new UsageError(`${echo(file!)} is not a file (give a sketch file, .mbk; ${why.replace(/, not a regular file$/, '')})`);
      if (o.port < 0 || o.port > 65535) throw new UsageError(`--port ${o.port} is outside 0..65535`);
      const { startServer } = await import('../web/server/serve.js');
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        server = await startServer({ port: o.port, ...(file !== undefined ? { file } : {}) });
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
      const { startLanguageServer, DEFAULT_HAZARD_BOUNDS } = await import('../lsp/index.js');
      const code = await startLanguageServer({
        bounds: {
          timeoutMs: o.checkTimeout !== undefined ? Math.round(o.checkTimeout * 1000) : DEFAULT_HAZARD_BOUNDS.timeoutMs,
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
