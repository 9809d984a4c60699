import { Command } from 'commander';
import { expect, test } from 'vitest';
import { VERB_NAMES, VERBS } from '../src/cli/commands.js';
import { main } from '../src/cli/main.js';

/**
 * `main` registers only the verb a run names (src/cli/main.ts): the names it looks the verb up by
 * are the verbs' own, and a verb's help and errors are the same as with every verb registered.
 */
test('VERB_NAMES names VERBS, in order', () => {
  const program = new Command();
  const ctx = { io: { out: () => {}, err: () => {}, color: false }, started: 0, exit: () => {} } as never;
  for (const v of VERBS) v(program, ctx);
  expect(program.commands.map((c) => c.name())).toEqual([...VERB_NAMES]);
});

/** What `main` prints and returns for `argv`. */
async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s: string) => (out += s), err: (s: string) => (err += s), color: false } as never);
  return { code, out, err };
}

test('a verb prints the same help and usage errors whether it is named first or not', async () => {
  for (const verb of VERB_NAMES) {
    // `help VERB` registers every verb; `VERB --help` only that one.
    expect(await cli([verb, '--help'])).toEqual(await cli(['help', verb]));
  }
  const bad = await cli(['check', '--no-such-flag', 'pipeline']);
  expect(bad.code).toBe(2);
  expect(bad.err).toMatch(/unknown option '--no-such-flag'/);
  const typo = await cli(['chek', 'pipeline']);
  expect(typo.code).toBe(2);
  expect(typo.err).toMatch(/Did you mean check\?/);
  expect((await cli(['--help'])).out).toMatch(/^ {2}lsp /m);
});
