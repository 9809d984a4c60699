#!/usr/bin/env python3
"""GPU-wide copy rates from a hw/run_plan.sh result (plan.json, chain item `load`), and the
distinct-L2 / HBM parameters of src/sim/timing.ts they give.

    usage: python3 hw/gpu_wide.py hw/results/plan.json [more plan*.json ...]

For each file (the card is the file's `gpu` field): per-SM and GPU-wide read rates (B/cycle) of
the distinct-L2 and HBM streams at every CTA count, from the rows whose loop is bound by the shared
bandwidth (longer than both the producer's issue-bound loop and one tile at the per-SM rate), and

- a least-squares fit of the model's distinct-L2 share, per-SM rate = B / (n - 1 + n0)
  (`tmaL2DistinctBytesPerCycle` = B, `tmaL2DistinctHalfSms` = n0; linear in 1 / rate), on those rows;
- the GPU-wide HBM rate at the largest CTA count (`hbmBytesPerCycle`).

The model's column is the share alone: the model also adds the load-dependent queueing latency
(`tmaQueueLatency`), so its simulated rates are lower (34.5 B/cycle per SM at 132 SMs against the
share's 38.1); compare with `npm run heldout` after changing the parameters.

It prints; it does not write src/sim/timing.ts. Only a file whose `gpu` names an H200 gives figures
for the H200 model (docs/HARDWARE.md, "H100 figures and the H200": the H100's shared L2 and HBM differ).
"""
import json
import statistics
import sys

PER_SM = 96.0  # tmaBytesPerCycleSm: one SM's receive limit (plan.json chain, 1-16 CTAs)
MODEL = {'tmaL2DistinctBytesPerCycle': 8500, 'tmaL2DistinctHalfSms': 92, 'hbmBytesPerCycle': 2420}


def bound_rows(rows, source):
    """Rows of `source` whose loop is set by the shared bandwidth, with their per-SM rate."""
    issue = min(r['loop'] for r in rows if r['ctas'] == 1 and r['source'] == 'l2_distinct')
    out = []
    for r in rows:
        if r['source'] != source or r['timeouts']:
            continue
        floor = max(issue, r['tile_bytes'] / PER_SM)
        if r['loop'] > 1.03 * floor:
            out.append((r['ctas'], r['stages'], r['tile_bytes'], r['loop'], r['tile_bytes'] / r['loop']))
    return out


def fit_share(bound):
    """Least squares of 1 / rate = (n - 1) / B + n0 / B over the rows (n, rate)."""
    xs = [n - 1 for n, *_, rate in bound]
    ys = [1 / rate for *_, rate in bound]
    if len(set(xs)) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    icpt = my - slope * mx
    b = 1 / slope
    return b, icpt * b


def main(paths):
    for path in paths:
        j = json.load(open(path))
        load = [r for r in j['chain'] if r['item'] == 'load']
        print(f'{path}: {j.get("gpu")} ({j.get("sm_count")} SMs)')
        for source in ('l2_distinct', 'hbm'):
            bound = bound_rows(load, source)
            print(f'  {source}: bandwidth-bound rows {len(bound)} of {sum(r["source"] == source for r in load)}')
            by_n = {}
            for n, s, t, loop, rate in bound:
                by_n.setdefault(n, []).append(rate)
            for n in sorted(by_n):
                rs = by_n[n]
                print(f'    {n:4d} CTAs: per SM {min(rs):6.1f}-{max(rs):6.1f} (median {statistics.median(rs):6.1f}), '
                      f'GPU-wide {n * statistics.median(rs):7.0f} B/cycle  ({len(rs)} rows)')
            if source == 'l2_distinct':
                f = fit_share(bound)
                if f:
                    b, n0 = f
                    print(f'    fit B / (n - 1 + n0): B = {b:.0f}, n0 = {n0:.1f}  (model: {MODEL["tmaL2DistinctBytesPerCycle"]}, '
                          f'{MODEL["tmaL2DistinctHalfSms"]})')
                    for n in sorted(by_n):
                        print(f'      {n:4d} CTAs: fit {min(PER_SM, b / (n - 1 + n0)):6.1f}, model '
                              f'{min(PER_SM, MODEL["tmaL2DistinctBytesPerCycle"] / (n - 1 + MODEL["tmaL2DistinctHalfSms"])):6.1f} (share before queueing), '
                              f'measured {statistics.median(by_n[n]):6.1f}')
            elif by_n:
                n = max(by_n)
                print(f'    hbmBytesPerCycle from {n} CTAs: {n * statistics.median(by_n[n]):.0f} (model: {MODEL["hbmBytesPerCycle"]})')


if __name__ == '__main__':
    main(sys.argv[1:] or ['hw/results/plan.json'])
