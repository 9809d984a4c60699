#!/usr/bin/env python3
"""Prints a compact table of the timing results under STAGE/hw/results (latency.json, pipeline.json)."""
import json, os, sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
res = os.path.join(root, "hw", "results")
try:
    L = json.load(open(os.path.join(res, "latency.json")))
    print(f"SM clock {L['sm_clock_mhz']} MHz")
    for k, v in L["chains"]["ops"].items():
        print(f"  {k:40s} per_link {v['per_link']:8.1f}  net {v['net']:8.1f}")
    print("  try_wait incomplete ->false", L["try_wait_incomplete_returns_false_after"]["median"])
    for k, v in L["pingpong_round_trip"].items():
        print(f"  pingpong {k:22s} {v['cycles_per_round_trip']:.1f}")
    for k, v in L["wakeup_one_way"].items():
        print(f"  wakeup   {k:22s} {v['median']:.1f} (p10 {v['p10']}, p90 {v['p90']})")
    for r in L["tma_bulk_latency"]["rows"]:
        print(f"  tma {r['source']:4s} {r['poll']:9s} {r['bytes']:6d} B  {r['median']:7.1f} (p10 {r['p10']}, p90 {r['p90']}) issue {r['issue_median']}")
    for r in L.get("bulk_issue_throughput", {}).get("rows", []):
        print(f"  bulk issue {r['bytes']:6d} B: {r['per_pair_issue']:.1f} cyc/pair, 32 copies done in {r['all_done']:.0f} ({r['bytes_per_cycle']:.1f} B/cyc)")
    print("  any_timeout", L.get("any_timeout"))
except Exception as e:
    print("latency:", e)
try:
    P = json.load(open(os.path.join(res, "pipeline.json")))
    print("pipeline: S tileKiB W ctas source -> cycles/iter (cta min..max) MHz B/cyc timeouts")
    for c in P["configs"]:
        print(f"  {c.get('kind', 'bulk')[:9]:9s} {c.get('consumer_wait', '')[:8]:8s} S={c['stages']} {c['tile_bytes']//1024:3d}KiB W={c['work_cycles']:4d} ctas={c['ctas']:3d} {c['source']:10s} -> "
              f"{c.get('cycles_per_iter', float('nan')):8.1f} mean {c.get('mean_cycles_per_iter', float('nan')):8.1f} ({c.get('cta_median_min', 0):.0f}..{c.get('cta_median_max', 0):.0f}) "
              f"{c.get('sm_clock_mhz', 0):.0f} MHz {c.get('bytes_per_cycle_per_sm', 0):.1f} B/c to={c['timeouts']} sms={c['distinct_sms']}"
              + (f" wait={c['consumer_wait']}" if c.get('consumer_wait', 'try_wait_all_lanes') != 'try_wait_all_lanes' else "")
              + (f" trace={c['breakdown_median']}" if c.get('trace') else ""))
except Exception as e:
    print("pipeline:", e)
try:
    L = json.load(open(os.path.join(res, "load.json")))
    print("tma_load: source ctas bytes in_flight -> latency median (cta min..max) cycles/copy B/cyc/SM GPU B/cyc")
    for r in L["tma_load"]["rows"]:
        print(f"  {r['source']:3s} {r['ctas']:3d} {r['bytes']//1024:3d}KiB x{r['in_flight']} -> {r['latency_median']:7.1f} "
              f"({r['latency_cta_min']:.0f}..{r['latency_cta_max']:.0f}) {r['cycles_per_copy']:7.1f} {r['bytes_per_cycle_per_sm']:6.1f} "
              f"{r['gpu_bytes_per_cycle']:7.0f} to={r['timeouts']} sms={r['distinct_sms']}")
    for r in L["contention"]["rows"]:
        print(f"  contention {r['warps']:2d} warps {r['arrive']:9s} count {r['count']:4d}: {r['cycles_per_round']:.1f} cycles/round to={r['timeouts']}")
except Exception as e:
    print("load:", e)
