/**
 * The child process of one real-kernel bench row: `node dist/bench/kernel-row-main.js ROOT JOB`
 * (JOB: a {@link RowJob} as JSON) prints the row's {@link RowResult} as one JSON line.
 */
import { checkRow, type RowJob } from './kernel-row.js';

const [root, job] = process.argv.slice(2);
if (!root || !job) {
  console.error('usage: kernel-row-main.js ROOT JOB_JSON');
  process.exit(2);
}
console.log(JSON.stringify(checkRow(root, JSON.parse(job) as RowJob)));
