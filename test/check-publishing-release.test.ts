/**
 * A release that publishes unfenced generic accesses is never taken alone (src/check/forced.ts,
 * docs/CHECK.md "Stable arrives"): a writer's `st.shared` of a buffer a bulk store later reads,
 * then a release (a local arrive that does not complete the phase, a `bar.arrive`, a remote
 * arrive), while a third agent's `fence.proxy.async` can come before or after that release (it
 * waits for a copy the writer issued after its store). The fence clears what is published
 * (detect-fences.ts), so only the order "fence, then release" leaves the write published for the
 * store: `missing-fence`. Each kernel's hazards and final states must equal the unreduced search's.
 */
import { describe, expect, test } from 'vitest';
import { compare, outcome } from './support/differential.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

/** The writer's and the fencer's release onto what the storer waits for, per variant. */
const RELEASES = {
  arrive: { head: 'barrier go[1] count=2', cluster: '', w: 'mbarrier.arrive go[0]', f: 'mbarrier.arrive go[0]', wait: 'mbarrier.try_wait.parity go[0], 0', peer: '' },
  named: { head: '', cluster: '', w: 'bar.arrive 1, 96', f: 'bar.arrive 1, 96', wait: 'bar.sync 1, 96', peer: '' },
  remote: {
    head: 'barrier go[1] count=1', cluster: ' cluster=2', w: 'mbarrier.arrive.release.cluster go[0]@1', f: 'mbarrier.arrive go[0]', wait: 'mbarrier.try_wait.parity go[0], 0',
    peer: 'role peer warps=1 per=one where=cta == 1:\n    mbarrier.try_wait.parity go[0], 0\n',
  },
} as const;

/** The sketch of one variant (see the module comment); the writer's release is its last step. */
function sketch(v: keyof typeof RELEASES): string {
  const r = RELEASES[v];
  const here = r.cluster ? ' where=cta == 0' : '';
  return `kernel "publish" arch=sm_90a${r.cluster}
${r.head}
barrier sig[1] count=1
smem C[1] bytes=1024
smem D[1] bytes=256
role writer warps=1 per=one${here}:
    st.shared C[0]
    cp.async.bulk.tensor D[0], 256, sig[0]
    ${r.w}
role fencer warps=1 per=one${here}:
    mbarrier.arrive.expect_tx sig[0], 256
    mbarrier.try_wait.parity sig[0], 0
    fence.proxy.async
    ${r.f}
role storer warps=1 per=one${here}:
    ${r.wait}
    cp.async.bulk.store C[0], 1024
    cp.async.bulk.commit_group
    cp.async.bulk.wait_group.read 0
${r.peer}`;
}

describe('a release that publishes an unfenced generic write is explored in every order', () => {
  for (const v of Object.keys(RELEASES) as (keyof typeof RELEASES)[]) {
    test(`${v}: every reduction finds the missing fence the unreduced search finds`, () => {
      const parsed = parseSketch(sketch(v), 'publish.mbk');
      expect(parsed.diagnostics).toEqual([]);
      const r = compare(parsed.kernel!, 20_000);
      expect(r).not.toBeNull();
      expect(r!.full.hazards.filter((h) => h.startsWith('missing-fence'))).toEqual([v === 'remote' ? 'missing-fence|C[0]@c0' : 'missing-fence|C[0]']);
      expect(r!.divergences).toEqual([]);
    }, 60_000);
  }
  test('with the fence in the writer, no order publishes the write: no finding in either search', () => {
    const text = sketch('arrive').replace('    cp.async.bulk.tensor D[0], 256, sig[0]\n', '    fence.proxy.async\n    cp.async.bulk.tensor D[0], 256, sig[0]\n');
    const p = instantiate(parseSketch(text, 'publish.mbk').kernel!);
    for (const opts of [{}, { por: false, symmetry: false }]) {
      const o = outcome(p, { ...opts, timeout: 20_000 });
      expect([o.complete, o.hazards]).toEqual([true, []]);
    }
  }, 60_000);
});
