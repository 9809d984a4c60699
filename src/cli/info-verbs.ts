/**
 * The verbs that only print: `mbsim examples` (the built-in kernels, one line each),
 * `mbsim decode` (raw 64-bit mbarrier words and 32-bit arrive tokens explained, src/report/decode.ts)
 * and `mbsim info` (a PTX module's kernels, parameters and instruction counts, `ptx-info.ts`).
 */
import { EXAMPLES } from '../examples/index.js';
import { DecodeError, explainWord } from '../report/decode.js';
import { ECHO_MAX, echo } from './args.js';
import type { Verb } from './io.js';
import { UsageError } from './load.js';

/** Registers `mbsim examples`. */
export const examplesCommand: Verb = (program, { io }) => {
  program
    .command('examples')
    .description('list the built-in examples')
    .action(() => {
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
    .action((hexes: string[]) => {
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

/** Registers `mbsim info`. The PTX parser is loaded only by this verb. */
export const infoCommand: Verb = (program, { io }) => {
  program
    .command('info')
    .description("list a PTX module's kernels and functions: parameters, header directives, instruction counts")
    .argument('<file.ptx>', 'PTX as nvcc -ptx writes it')
    .action(async (path: string) => {
      const { loadPtxFile, ptxInfo } = await import('./ptx-info.js');
      io.out(ptxInfo(loadPtxFile(path).module).join('\n'));
    });
};
