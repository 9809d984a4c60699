/**
 * `node --import ./test/support/ts-register.mjs test/support/interrupted-write.ts FILE`: writes
 * 64 MiB to FILE with the CLI's writer while the process has a SIGINT listener of its own (as
 * `check --watch` has), and sends itself SIGINT after the fourth chunk. Prints one JSON line:
 * what the write ended with (`error`: the message, `interrupted`: whether it was a
 * WriteInterrupted) and whether the listener ran (tests: test/hostile-bounds.test.ts).
 */
import { writeOutput, WriteInterrupted } from '../../src/cli/output.js';

const file = process.argv[2]!;
let heard = false;
process.on('SIGINT', () => (heard = true));
function* chunks(): Generator<string> {
  for (let i = 0; i < 64; i++) {
    if (i === 4) process.kill(process.pid, 'SIGINT');
    yield 'x'.repeat(1 << 20);
  }
}
let error: string | null = null;
let interrupted = false;
try {
  await writeOutput(file, chunks(), { out: () => undefined, err: () => undefined });
} catch (err) {
  error = (err as Error).message;
  interrupted = err instanceof WriteInterrupted;
}
process.stdout.write(`${JSON.stringify({ error, interrupted, heard })}\n`);
