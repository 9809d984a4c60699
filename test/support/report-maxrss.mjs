/**
 * `node --import ./test/support/report-maxrss.mjs …`: at exit, writes `MAXRSS <bytes>` (the
 * process's peak resident set, `process.resourceUsage().maxRSS`, every thread included) as the
 * last line of stderr (tests of the resource bounds, test/support/measured-cli.ts).
 */
process.on('exit', () => {
  process.stderr.write(`\nMAXRSS ${process.resourceUsage().maxRSS * 1024}\n`);
});
