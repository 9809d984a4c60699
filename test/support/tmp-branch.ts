import { readFileSync } from 'node:fs';
import { parseSketch } from '../../src/lang/index.js';
import { instantiate } from '../../src/machine/program.js';
import { Machine } from '../../src/machine/machine.js';
import { explore } from '../../src/check/explore.js';
const k = parseSketch(readFileSync('examples/deepgemm-fp8.mbk', 'utf8'), 'd.mbk').kernel!;
const p = instantiate(k, { C: 2, S: 2, K: 1, TILES: 1 });
const m = new Machine(p);
const tally = new Map<string, number>();
let n = 0;
const r = explore(p, { timeoutMs: 8000, randomRuns: false, hooks: { onExpand: (s) => {
  n++;
  const ch = m.enabled(s);
  const keys = new Set<string>();
  for (const c of ch) {
    let key: string;
    if (c.kind === 'agent') { const a = s.agents[c.agent]!; const info = p.agents[c.agent]!; const ins = p.roles[info.role]!.code[a.pc]; key = `${p.roles[info.role]!.name}: ${(ins as any)?.text ?? (ins as any)?.i}`; }
    else { const o = s.inflight.find((y) => y.id === (c as any).id); key = `async ${o?.kind}`; }
    keys.add(key);
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }
} } });
console.log('states', r.states, 'expanded', n);
console.log([...tally].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${v}\t${k}`).join('\n'));
