#!/usr/bin/env python3
"""Merges the per-sequence JSON printed by hw/probes/conformance.cu (two runs each) into
conformance/<gpu>/<group>.json files. Usage: merge_conformance.py SEQDIR OUTDIR GPU DRIVER NVCC"""
import json, os, sys, glob, re

seqdir, outdir, gpu, driver, nvcc = sys.argv[1:6]
groups = {}
bad = 0
files = sorted(glob.glob(os.path.join(seqdir, "*.1.json")), key=lambda p: int(os.path.basename(p).split(".")[0]))
for p1 in files:
    p2 = p1.replace(".1.json", ".2.json")
    try:
        s1 = json.load(open(p1))
    except Exception as e:
        print("unparsable", p1, e); bad += 1; continue
    try:
        s2 = json.load(open(p2))
        same = s1 == s2
    except Exception:
        s2, same = None, False
    if not same:
        print("NONDETERMINISTIC (run 1 != run 2):", s1["name"])
        s1["second_run_differs"] = True
        s1["second_run"] = s2
    g = s1.pop("group")
    groups.setdefault(g, []).append(s1)
os.makedirs(outdir, exist_ok=True)
for g, seqs in groups.items():
    doc = {"probe": "hw/probes/conformance.cu", "gpu": gpu, "driver": driver, "nvcc": nvcc,
           "schema": "docs/HARDWARE.md#conformance-vectors", "sequences": seqs}
    with open(os.path.join(outdir, g + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    traps = sum(1 for s in seqs if "error" in s)
    print(f"{g}: {len(seqs)} sequences ({traps} ended in a trap)")
print("bad:", bad)
