/**
 * `node --import ./test/support/ts-register.mjs FILE.ts`: runs the TypeScript sources directly in a
 * child process (tests only), with the hooks of ts-hooks.mjs.
 */
import { register } from 'node:module';

register(new URL('./ts-hooks.mjs', import.meta.url));
