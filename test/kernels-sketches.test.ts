/**
 * The sketches of the reference CUDA kernels (examples/kernels/*.mbk, hw/kernels/*.cu) and their
 * planted-bug twins (examples/kernels/planted/*.mbk, the -DBUG=N builds): each is checked with the
 * parameters of its `# params:` line and must give the verdicts of its `# expect:` lines (the first
 * one is the verdict; every one names a hazard the check reports, with its barrier or buffer).
 * Each sketch line's `:N` references must name source lines of the .cu file it mirrors, and the
 * committed PTX of every planted twin must differ from the correct kernel's where the bug is planted.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { ctaPerms, subjectUpToCtas } from './support/differential.js';

const repo = join(import.meta.dirname, '..');
const dir = join(repo, 'examples', 'kernels');
const sketches = [
  ...readdirSync(dir).filter((f) => f.endsWith('.mbk')).map((f) => `examples/kernels/${f}`),
  ...readdirSync(join(dir, 'planted')).filter((f) => f.endsWith('.mbk')).map((f) => `examples/kernels/planted/${f}`),
].sort();

/** The `# params:` assignments and `# expect:` lines of a sketch header. */
function header(src: string): { set: Record<string, number>; expects: { kind: string; subject?: string }[] } {
  const set: Record<string, number> = {};
  const params = src.split('\n').find((l) => l.startsWith('# params:'));
  for (const m of (params ?? '').matchAll(/([A-Z_]+)=(\d+)/g)) set[m[1]!] = Number(m[2]);
  const expects = src.split('\n').filter((l) => l.startsWith('# expect:')).map((l) => {
    const [kind, ...rest] = l.slice('# expect:'.length).trim().split(/\s+/);
    const subject = rest.find((x) => x.startsWith('barrier=') || x.startsWith('buffer='))?.split('=')[1];
    return { kind: kind!, subject };
  });
  return { set, expects };
}

/** The .cu file a sketch mirrors: the first `hw/kernels/NAME.cu` its header names. */
const cuOf = (src: string) => /hw\/kernels\/(\w+)\.cu/.exec(src)![1]!;

describe('reference-kernel sketches give their expected verdicts', () => {
  test('every kernel has its sketch and three planted twins', () => {
    expect(sketches.filter((f) => !f.includes('/planted/'))).toEqual([
      'examples/kernels/cluster-mc.mbk', 'examples/kernels/persistent.mbk', 'examples/kernels/tcgen05.mbk', 'examples/kernels/tma-wgmma.mbk',
    ]);
    expect(sketches.filter((f) => f.includes('/planted/')).length).toBe(12);
  });

  test.each(sketches)('%s', (file) => {
    const src = readFileSync(join(repo, file), 'utf8');
    const parsed = parseSketch(src, file);
    expect(parsed.diagnostics).toEqual([]);
    const { set, expects } = header(src);
    expect(expects.length).toBeGreaterThan(0);
    const r = check(instantiate(parsed.kernel!, set), { maxStates: 1_000_000, timeout: 120_000 });
    expect(r.verdict).toBe(expects[0]!.kind);
    if (expects[0]!.kind === 'ok') {
      expect([r.complete, r.hazards]).toEqual([true, []]);
      return;
    }
    // Under CTA symmetry the search reports one CTA's copy of a symmetric hazard: subjects compare up to the CTA permutations.
    const perms = ctaPerms(r.program);
    const up = (kind: string, subject: string | undefined) => `${kind} ${subject ? subjectUpToCtas(r.program, subject, perms) : ''}`.trim();
    const found = new Set([...r.hazards, ...r.warnings].map((h) => up(h.kind, h.subject?.name)));
    for (const e of expects) expect([...found], `${file}: ${e.kind} ${e.subject ?? ''}`).toContain(up(e.kind, e.subject));
  }, 120_000);
});

/** What the CUDA line a sketch operation names must call (by the operation's mnemonic prefix). */
const CUDA_CALL: [string, RegExp][] = [
  ['mbarrier.try_wait.parity', /wait_parity/], ['mbarrier.arrive.expect_tx', /arrive_expect_tx|barrier_arrive_tx/],
  ['mbarrier.init', /mbarrier_init|\binit\(/], ['mbarrier.arrive', /arrive/], ['cp.async.bulk.tensor', /cp_async_bulk_tensor/],
  ['cp.async.bulk', /memcpy_async_tx/], ['wgmma.mma_async', /wgmma_m64n128k16/], ['wgmma.commit_group', /wgmma_commit/],
  ['wgmma.wait_group', /wgmma_wait0/], ['tcgen05.mma', /tcgen05_mma/], ['tcgen05.commit', /tcgen05_commit/],
  ['tcgen05.ld', /tcgen05_ld_32x32b/], ['tcgen05.wait::ld', /tcgen05_wait_ld/], ['tcgen05.alloc', /tcgen05_alloc/],
  ['tcgen05.dealloc', /tcgen05_dealloc/], ['tcgen05.relinquish_alloc_permit', /relinquish_alloc_permit/],
  ['tcgen05.fence::before_thread_sync', /fence_before_thread_sync/], ['tcgen05.fence::after_thread_sync', /fence_after_thread_sync/],
  ['fence.mbarrier_init', /fence_mbarrier_init/], ['barrier.cluster.arrive', /barrier_cluster_arrive/],
  ['barrier.cluster.wait', /barrier_cluster_wait/], ['bar.sync', /__syncthreads/], ['elect', /elect_one|threadIdx\.x == 0|t == 0/],
];

describe('sketch lines name the CUDA lines they mirror', () => {
  test.each(sketches)('%s', (file) => {
    const src = readFileSync(join(repo, file), 'utf8');
    const cu = readFileSync(join(repo, 'hw', 'kernels', `${cuOf(src)}.cu`), 'utf8').split('\n');
    const refs = [...src.matchAll(/(?<![\w/.]):(\d+)\b/g)].map((m) => Number(m[1]));
    expect(refs.length).toBeGreaterThan(15);
    const bad = refs.filter((n) => n < 1 || n > cu.length || cu[n - 1]!.trim() === '' || cu[n - 1]!.trim() === '}');
    expect(bad).toEqual([]);
    // An operation's first reference names the CUDA line that performs it.
    const wrong: string[] = [];
    for (const line of src.split('\n').filter((l) => !l.startsWith('#') && /#\s*:\d+/.test(l))) {
      const code = line.split('#')[0]!.trim().replace(/^_ = /, '');
      const n = Number(/#\s*:(\d+)/.exec(line)![1]);
      const call = CUDA_CALL.find(([m]) => code.startsWith(m) && /[\s:.]|$/.test(code.charAt(m.length)));
      if (call && !call[1].test(cu[n - 1]!)) wrong.push(`${code} -> :${n} ${cu[n - 1]!.trim()}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('the committed PTX of the planted twins carries the planted bug', () => {
  const ptx = (name: string) => readFileSync(join(repo, 'hw', 'kernels', `${name}.ptx`), 'utf8');
  const count = (text: string, re: RegExp) => text.split('\n').filter((l) => re.test(l)).length;
  test('tma_wgmma: expect_tx of 32 KiB + 1 KiB (BUG=1), empty count 128 (BUG=2)', () => {
    // The tx count and the empty count are materialized in a register before their instruction.
    const movs = (n: string, v: number) => count(ptx(n), new RegExp(`^\\s*mov\\.u32\\s+%r\\d+, ${v};`));
    expect([movs('tma_wgmma', 32768), movs('tma_wgmma', 33792), movs('tma_wgmma.bug1', 32768), movs('tma_wgmma.bug1', 33792)]).toEqual([1, 0, 0, 1]);
    expect([movs('tma_wgmma', 256), movs('tma_wgmma', 128), movs('tma_wgmma.bug2', 256), movs('tma_wgmma.bug2', 128)]).toEqual([2, 0, 0, 2]);
    expect(count(ptx('tma_wgmma'), /^\s*mbarrier\.arrive\.expect_tx\.release\.cta\.shared::cta\.b64/)).toBe(2);
  });
  test('cluster_mc: one cluster barrier fewer in BUG=2 and BUG=3', () => {
    const arrives = (n: string) => count(ptx(n), /^\s*barrier\.cluster\.arrive/);
    expect([arrives('cluster_mc'), arrives('cluster_mc.bug1'), arrives('cluster_mc.bug2'), arrives('cluster_mc.bug3')]).toEqual([2, 2, 1, 1]);
    expect(count(ptx('cluster_mc'), /^\s*cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.multicast::cluster/)).toBe(1);
    expect(count(ptx('cluster_mc'), /^\s*mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64 _,/)).toBe(1);
  });
  test('tcgen05: a plain arrive instead of the stage commit (BUG=1), no wait::ld (BUG=2)', () => {
    const commits = (n: string) => count(ptx(n), /^\s*tcgen05\.commit/);
    expect([commits('tcgen05'), commits('tcgen05.bug1')]).toEqual([2, 1]);
    expect([count(ptx('tcgen05'), /^\s*tcgen05\.wait::ld/), count(ptx('tcgen05.bug2'), /^\s*tcgen05\.wait::ld/)]).toEqual([1, 0]);
    expect(ptx('tcgen05')).toMatch(/^\.target sm_100a$/m);
  });
});
