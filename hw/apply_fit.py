#!/usr/bin/env python3
"""Writes the values printed by `npm run calibrate` (the JSON block) into src/sim/timing.ts (H200
defaults) and src/bench/calibrate.ts (PROBE_GLUE, PROBE_PRODUCER_GLUE). Each fitted default's source says it was fitted,
followed by what it was before. Usage: npm run calibrate > fit.txt; python3 hw/apply_fit.py fit.txt"""
import json, re, sys

text = open(sys.argv[1]).read()
vals = json.loads(text[text.index('{'):text.index('}') + 1])
FIT = 'fit (npm run calibrate, src/bench/calibrate.ts) to the H200 measurements in hw/results/pipeline.json'
p = 'src/sim/timing.ts'
s = open(p).read()
for k, v in vals.items():
    if k in ('probeGlue', 'probeProducerGlue'):
        continue
    m = re.search(r"(\n  %s: \{ value: )(-?[0-9.]+)(, source: )(`[^`]*`|'[^']*')" % k, s)
    if not m:
        sys.exit('no default for ' + k)
    src = m.group(4)
    body = src[1:-1]
    if not body.startswith('fit ('):
        body = f'{FIT}; before that: {body}'
    else:
        body = FIT + body[body.index(';'):] if ';' in body else FIT
    q = '`' if '${' in body or "'" in body else "'"
    s = s[:m.start()] + m.group(1) + str(v) + m.group(3) + q + body + q + s[m.end():]
open(p, 'w').write(s)
p = 'src/bench/calibrate.ts'
c = open(p).read()
c = re.sub(r'export let PROBE_GLUE = \d+;', f"export let PROBE_GLUE = {vals['probeGlue']};", c)
c = re.sub(r'export let PROBE_PRODUCER_GLUE = \d+;', f"export let PROBE_PRODUCER_GLUE = {vals['probeProducerGlue']};", c)
open(p, 'w').write(c)
print('applied', len(vals), 'values')
