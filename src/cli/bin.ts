#!/usr/bin/env node
/**
 * The `mbsim` executable of the unbundled CLI (tsc's dist/cli/, the TypeScript sources in tests):
 * {@link start} with the process's arguments. The installed command is the bundle's
 * `dist/bin/mbsim.cjs` (`bundle-bin.ts`), which runs the same {@link start}.
 */
import { start } from './start.js';

start(process.argv.slice(2));
