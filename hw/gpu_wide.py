#!/usr/bin/env python3
"""GPU-wide copy rates from a hw/run_plan.sh result (plan.json, chain item `load`), and the
distinct-L2 / HBM parameters of src/sim/timing.ts they give.

    usage: python3 hw/gpu_wide.py hw/results/plan.json [more plan*.json ...]

For each file (the card is the file's `gpu` field): per-SM and GPU-wide read rates (B/cycle) of
the distinct-L2 and HBM streams at every CTA count, from the rows whose loop is bound by the shared
bandwidth (longer than both the producer's issue-bound loop and one tile at the per-SM rate), and

- a fit of the model's distinct-L2 share, per-SM rate = min(A + B / n, cap / n)
  (`tmaL2DistinctBytesPerCycleSm` = A, `tmaL2DistinctSharedBytesPerCycle` = B,
  `tmaL2DistinctBytesPerCycle` = cap): the cap is the GPU-wide rate at the largest CTA count, A and B
  a least-squares line of the rate over 1 / n on the rows of smaller CTA counts;
- the GPU-wide HBM rate at the largest CTA count (`hbmBytesPerCycle`).

The model's column is the share alone: the model also adds the load-dependent queueing latency
(`tmaQueueLatencyL2Distinct`), which lowers the rates of shallow pipelines; compare with `npm run
heldout` after changing the parameters.

It prints; it does not write src/sim/timing.ts. Only a file whose `gpu` names an H200 gives figures
for the H200 model (docs/HARDWARE.md, "H100 figures and the H200": the H100's shared L2 and HBM differ).
"""
import json
import statistics
import sys

PER_SM = 96.0  # tmaBytesPerCycleSm: one SM's receive limit (plan.json chain, 1-16 CTAs)
MODEL = {'tmaL2DistinctBytesPerCycleSm': 49, 'tmaL2DistinctSharedBytesPerCycle': 452, 'tmaL2DistinctBytesPerCycle': 4700,
         'hbmBytesPerCycle': 2420}


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


def share(a, b, cap, n):
    """Per-SM rate of n SMs reading distinct addresses: min(own limit, A + B / n, cap / n)."""
    return min(PER_SM, a + b / n, cap / n)


def fit_share(by_n):
    """(A, B, cap): cap from the largest CTA count, A + B / n by least squares over the others' medians."""
    ns = sorted(by_n)
    if len(ns) < 3:
        return None
    top = ns[-1]
    cap = top * statistics.median(by_n[top])
    xs = [1 / n for n in ns[:-1]]
    ys = [statistics.median(by_n[n]) for n in ns[:-1]]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope, cap


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
                f = fit_share(by_n)
                if f:
                    a, b, cap = f
                    m = MODEL
                    print(f'    fit min(A + B / n, cap / n): A = {a:.1f}, B = {b:.0f}, cap = {cap:.0f}  (model: '
                          f'{m["tmaL2DistinctBytesPerCycleSm"]}, {m["tmaL2DistinctSharedBytesPerCycle"]}, {m["tmaL2DistinctBytesPerCycle"]})')
                    for n in sorted(by_n):
                        mod = share(m['tmaL2DistinctBytesPerCycleSm'], m['tmaL2DistinctSharedBytesPerCycle'], m['tmaL2DistinctBytesPerCycle'], n)
                        print(f'      {n:4d} CTAs: fit {share(a, b, cap, n):6.1f}, model {mod:6.1f} (share before queueing), '
                              f'measured {statistics.median(by_n[n]):6.1f}')
            elif by_n:
                n = max(by_n)
                print(f'    hbmBytesPerCycle from {n} CTAs: {n * statistics.median(by_n[n]):.0f} (model: {MODEL["hbmBytesPerCycle"]})')


if __name__ == '__main__':
    main(sys.argv[1:] or ['hw/results/plan.json'])
