/**
 * `node --import ./test/support/ts-register.mjs test/support/measure-cli.mjs ARGS…`: runs the CLI
 * from the TypeScript sources (tests only) and, at exit, writes one line to stderr:
 * `MEASURE {"loadMs":…,"mainMs":…,"maxRssKb":…}`: the time to load the CLI's modules (transpiling
 * them; a built CLI has no such cost), the time from the CLI's start to the exit, and the
 * process's peak resident set (`process.resourceUsage().maxRSS`, every thread included).
 */
const t0 = Date.now();
const { main } = await import('../../src/cli/main.ts');
const t1 = Date.now();
process.on('exit', () => {
  process.stderr.write(`\nMEASURE ${JSON.stringify({ loadMs: t1 - t0, mainMs: Date.now() - t1, maxRssKb: process.resourceUsage().maxRSS })}\n`);
});
process.exitCode = await main(process.argv.slice(2));
