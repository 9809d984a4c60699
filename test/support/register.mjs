// Registers ts-hooks.mjs: `node --import ./test/support/register.mjs file.ts` runs TypeScript sources directly.
import { register } from 'node:module';
register('./ts-hooks.mjs', import.meta.url);
