/**
 * Agent names folded into runs: consecutive warps of one role instance (`math[0].w0`,
 * `math[0].w1`, …, as the machine names its agents, program layout) become one range,
 * `math[0].w0–w3` (in a cluster `math.w0–w3@c1`). One rule for every report that lists agents (hang reasons, blocked waiters,
 * phase tables).
 */

/** `names` with each run of consecutive warps of one instance as a range; other names as they are, in order. */
export function warpRuns(names: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < names.length) {
    // A cluster's agents carry their CTA after the warp (`consumer.w3@c1`): the run keeps it.
    const m = /^(.*\.w)(\d+)(@c\d+)?$/.exec(names[i]!);
    let j = i + 1;
    const cta = m?.[3] ?? '';
    if (m) {
      while (j < names.length && names[j] === `${m[1]}${Number(m[2]) + (j - i)}${cta}`) j++;
    }
    out.push(m && j - i > 1 ? `${m[1]}${m[2]}–w${Number(m[2]) + (j - i - 1)}${cta}` : names[i]!);
    i = m && j - i > 1 ? j : i + 1;
  }
  return out;
}

/** {@link warpRuns} joined with ', ', at most `max` parts (then how many more parts there are). */
export function runsLabel(names: readonly string[], max = 12): string {
  const runs = warpRuns(names);
  return runs.length <= max ? runs.join(', ') : `${runs.slice(0, max).join(', ')}, … and ${(runs.length - max).toLocaleString('en-US')} more`;
}
