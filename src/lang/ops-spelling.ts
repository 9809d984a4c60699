/**
 * How a mnemonic names an operation of the sketch language's table (ops.ts): the canonical names,
 * the aliases with PTX qualifiers the sketch does not need, the spellings whose qualifiers carry
 * meaning (mbarrier semantics and scope, cluster and named barriers, thread fences, reductions'
 * operators, value operations; PTX ISA §9.7.13), the tcgen05 spellings, and every mnemonic for
 * did-you-mean hints and completion.
 */
import { OPS, type OpSpec } from './ops.js';
import { parseReduction, REDUCTION_ALIASES } from './ops-reduce.js';
import { parseValueOp, VALUE_SPELLINGS } from './ops-values.js';

/** Other spellings accepted for an operation (full PTX qualifiers the sketch does not need). */
export const ALIASES: Record<string, string> = {
  'fence.mbarrier_init.release.cluster': 'fence.mbarrier_init',
  'fence.proxy.async.shared::cta': 'fence.proxy.async',
  // The asynchronous copy family with the PTX qualifiers that change nothing the machine models.
  'cp.async.ca.shared.global': 'cp.async',
  'cp.async.cg.shared.global': 'cp.async',
  'cp.async.ca.shared::cta.global': 'cp.async',
  'cp.async.cg.shared::cta.global': 'cp.async',
  'st.async.shared::cluster.mbarrier::complete_tx::bytes': 'st.async',
  'st.async.weak.shared::cluster.mbarrier::complete_tx::bytes': 'st.async',
  'cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes': 'cp.async.bulk.shared::cluster',
  'cp.async.bulk.prefetch.L2.global': 'cp.async.bulk.prefetch',
  ...Object.fromEntries([1, 2, 3, 4, 5].map((d) => [`cp.async.bulk.prefetch.tensor.${d}d.L2.global`, 'cp.async.bulk.prefetch.tensor'])),
  // The reduction operator (`red.async.add`, …): kept on the operation by parseQualifiers.
  ...REDUCTION_ALIASES,
  'fence.proxy.async.shared::cluster': 'fence.proxy.async',
  'fence.proxy.async.global': 'fence.proxy.async',
};

const BY_NAME = new Map(OPS.map((o) => [o.name, o]));

/** The operation spelled `mnemonic` (canonical, alias, or an instruction with PTX qualifiers), or undefined. */
export function findOp(mnemonic: string): OpSpec | undefined {
  return BY_NAME.get(mnemonic) ?? BY_NAME.get(Object.hasOwn(ALIASES, mnemonic) ? ALIASES[mnemonic]! : '') ?? parseQualifiers(mnemonic)?.spec ?? tcgen05Spelling(mnemonic);
}

/**
 * A tcgen05 instruction spelled with the PTX qualifiers the model does not distinguish:
 * `.cta_group::1`, `.sync.aligned` (alloc, dealloc, relinquish, st), `.shared::cta`, `.b32`, and
 * the shape / repeat / packing qualifiers of ld, st and cp (`.32x32b`, `.16x256b`, `.x8`,
 * `.pack::16b`, `.128x256b`, ...), e.g. `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32`
 * or `tcgen05.ld.sync.aligned.32x32b.x8.b32` (PTX ISA §9.7.16.7–§9.7.16.9). `.cta_group::2` is
 * accepted on `commit` (as `commit`) and on `alloc` / `dealloc` / `relinquish_alloc_permit` (their
 * pair forms); elsewhere it is not.
 */
function tcgen05Spelling(mnemonic: string): OpSpec | undefined {
  if (!mnemonic.startsWith('tcgen05.')) return undefined;
  let m = mnemonic.replace(/\.cta_group::1/g, '').replace(/^tcgen05\.commit\.cta_group::2/, 'tcgen05.commit').replace(/\.kind::\w+|\.mbarrier::arrive::one|\.multicast::cluster|\.shared::cluster|\.b64|\.shared::cta|\.b32|\.(un)?pack::16b|\.\d+x\d+b(x2)?|\.x\d+|\.warpx[24]::\w+/g, '');
  if (m.startsWith('tcgen05.ld.sync.aligned')) return BY_NAME.get('tcgen05.ld.sync.aligned');
  m = m.replace(/\.sync\.aligned$/, '');
  return m === mnemonic ? undefined : BY_NAME.get(m);
}

/** What {@link parseQualifiers} read from a qualified mnemonic. */
export interface Qualified {
  spec: OpSpec;
  /** `.release` / `.relaxed` of the arrive family, `.acquire` / `.relaxed` of the waits. */
  sem?: 'release' | 'relaxed' | 'acquire';
  /** `.cta` / `.cluster` of the arrive family and the waits. */
  scope?: 'cta' | 'cluster';
  /** Fields the spelling sets on the operation it builds (cluster barrier `.relaxed` / `.aligned`, `barrier.sync`'s non-alignment, a fence's semantics and scope). */
  fields?: Record<string, string | boolean>;
  /** Set when the spelling is not valid PTX for that instruction (or not modeled): the reason, for the message. */
  invalid?: string;
  /** With `invalid`: the columns [start, end) of the mnemonic at fault (a reduction's unknown operator), for the caret. */
  invalidAt?: [number, number];
}

/**
 * Per mbarrier instruction (PTX ISA §9.7.13.15): the `.sem` values it takes and the state spaces
 * (`.shared` means `.shared::cta`; only the arrive family, expect_tx and complete_tx take
 * `.shared::cluster`; `mbarrier.pending_count` takes none).
 */
const MB_RULES: [RegExp, string[], string[]][] = [
  [/^mbarrier\.arrive(_drop)?(\.expect_tx)?\.noComplete$/, ['release'], ['shared', 'shared::cta']],
  [/^mbarrier\.arrive/, ['release', 'relaxed'], ['shared', 'shared::cta', 'shared::cluster']],
  [/^mbarrier\.(try|test)_wait/, ['acquire', 'relaxed'], ['shared', 'shared::cta']],
  [/^mbarrier\.(expect|complete)_tx$/, ['relaxed'], ['shared', 'shared::cta', 'shared::cluster']],
  [/^mbarrier\.(init|inval)$/, [], ['shared', 'shared::cta']],
  [/^mbarrier\.pending_count$/, [], []],
];

const MB_BASES = OPS.map((o) => o.name).filter((n) => n.startsWith('mbarrier.')).sort((a, b) => b.length - a.length);

/**
 * An mbarrier instruction with the PTX qualifiers after its canonical name:
 * `{.sem.scope}{.shared{::cta|::cluster}}{.b64}` (PTX ISA §9.7.13.15: `.release` / `.relaxed` on
 * the arrive family, `.acquire` / `.relaxed` on waits, `.relaxed` on expect_tx / complete_tx;
 * `.cta` / `.cluster` scope; the state space; the `.b64` type), the state space also before the
 * semantics (`mbarrier.complete_tx.shared::cluster.relaxed.cluster.b64`, as CUTLASS writes it).
 * Returns undefined when `mnemonic` is not of that form, and `invalid` when the qualifiers are not
 * valid for that instruction (a space or semantics it does not take). A state space alone changes
 * nothing (the barrier reference's `@cta` says which CTA's barrier it is).
 */
function parseMbarrier(mnemonic: string): Qualified | undefined {
  const base = MB_BASES.find((b) => mnemonic === b || mnemonic.startsWith(`${b}.`));
  if (!base) return undefined;
  const spec = BY_NAME.get(base)!;
  const rest = mnemonic.slice(base.length);
  const m = /^(?:((?:\.(?:release|relaxed|acquire))?)((?:\.(?:cta|cluster))?)((?:\.shared(?:::cta|::cluster)?)?)|((?:\.shared(?:::cta|::cluster)?))((?:\.(?:release|relaxed|acquire))?)((?:\.(?:cta|cluster))?))((?:\.b64)?)$/.exec(rest);
  if (!m) return undefined;
  const sem = (m[1] || m[5] || '').slice(1);
  const scope = (m[2] || m[6] || '').slice(1);
  const space = (m[3] || m[4] || '').slice(1);
  const [, sems, spaces] = MB_RULES.find(([re]) => re.test(base))!;
  const r: Qualified = { spec };
  if (sem && !sems.includes(sem)) {
    return { spec, invalid: sems.length ? `${base} takes ${sems.map((x) => `.${x}`).join(' or ')}, not .${sem} (PTX ISA §9.7.13.15)` : `${base} takes no memory-ordering qualifier (PTX ISA §9.7.13.15)` };
  }
  if (scope && !sems.length) return { spec, invalid: `${base} takes no scope qualifier (PTX ISA §9.7.13.15)` };
  if (scope && base.endsWith('.noComplete') && scope !== 'cta') return { spec, invalid: `${base} takes only .release.cta (PTX ISA §9.7.13.15.13)` };
  if (space && !spaces.includes(space)) {
    return { spec, invalid: spaces.length ? `${base} operates on ${spaces.map((x) => `.${x}`).join(' or ')} only, not .${space} (PTX ISA §9.7.13.15)` : `${base} takes no state space: write ${base}.b64 (PTX ISA §9.7.13.15.17)` };
  }
  if (sem) r.sem = sem as Qualified['sem'];
  if (scope) r.scope = scope as 'cta' | 'cluster';
  return r;
}

/** `barrier.cluster.arrive{.release|.relaxed}{.aligned}`, `barrier.cluster.wait{.acquire}{.aligned}` (PTX ISA §9.7.13.3). */
function parseClusterBarrier(mnemonic: string): Qualified | undefined {
  const m = /^barrier\.cluster\.(arrive|wait)((?:\.(?:release|relaxed|acquire))?)((?:\.aligned)?)$/.exec(mnemonic);
  if (!m) return undefined;
  const spec = BY_NAME.get(`barrier.cluster.${m[1]}`)!;
  const sem = m[2]!.slice(1);
  const fields: Record<string, string | boolean> = {};
  if (m[1] === 'arrive') {
    if (sem === 'acquire') return { spec, invalid: 'barrier.cluster.arrive takes .release or .relaxed, not .acquire (PTX ISA §9.7.13.3)' };
    if (sem) fields.sem = sem;
  } else if (sem && sem !== 'acquire') return { spec, invalid: `barrier.cluster.wait takes only .acquire, not .${sem} (PTX ISA §9.7.13.3)` };
  if (m[3]) fields.aligned = true;
  return { spec, fields };
}

/**
 * Named barriers (PTX ISA §9.7.13.1): `bar{.cta}.sync` = `barrier{.cta}.sync.aligned` (aligned),
 * `barrier{.cta}.sync` (not aligned), and the same for `arrive`. `.red` (the reduction forms) is
 * not modeled.
 */
function parseNamedBarrier(mnemonic: string): Qualified | undefined {
  const m = /^(bar|barrier)((?:\.cta)?)\.(sync|arrive|red)((?:\.aligned)?)((?:\.[a-z0-9.]+)?)$/.exec(mnemonic);
  if (!m) return undefined;
  const spec = BY_NAME.get(m[3] === 'arrive' ? 'bar.arrive' : 'bar.sync')!;
  if (m[3] === 'red') return { spec, invalid: `${mnemonic}: the barrier reduction forms (bar.red / barrier.red) are not modeled; write bar.sync (PTX ISA §9.7.13.1)` };
  if (m[5]) return undefined;
  if (m[1] === 'bar' && m[4]) return undefined; // bar.sync is already aligned; bar.sync.aligned is not PTX
  const aligned = m[1] === 'bar' || !!m[4];
  return { spec, fields: aligned ? {} : { aligned: false } };
}

/**
 * Thread fences (PTX ISA §9.7.13.4): `fence{.sc|.acq_rel}.scope` (`.acq_rel` when absent), the
 * one-way `fence.acquire` / `fence.release` (with or without `.sync_restrict::shared::cluster` /
 * `::cta`, whose scope must be `.cluster`), and `membar.{cta,gl,sys}` (= `fence.sc` at cta, gpu,
 * sys scope).
 */
function parseFence(mnemonic: string): Qualified | undefined {
  const spec = BY_NAME.get('fence')!;
  const mb = /^membar\.(cta|gl|sys)$/.exec(mnemonic);
  if (mb) return { spec, fields: { sem: 'sc', scope: mb[1] === 'gl' ? 'gpu' : mb[1]! } };
  const m = /^fence((?:\.(?:sc|acq_rel|acquire|release))?)((?:\.sync_restrict::shared::(?:cta|cluster))?)((?:\.(?:cta|cluster|gpu|sys))?)$/.exec(mnemonic);
  if (!m) return undefined;
  const sem = m[1] ? m[1].slice(1) : 'acq_rel';
  if (!m[3]) return { spec, invalid: `${mnemonic} needs a scope: write ${mnemonic}.cta, .cluster, .gpu or .sys (PTX ISA §9.7.13.4)` };
  const scope = m[3].slice(1);
  if (m[2]) {
    const want = m[2].endsWith('cta') ? 'release' : 'acquire';
    if (sem !== want || scope !== 'cluster') return { spec, invalid: `${m[2].slice(1)} takes .${want} and the scope .cluster: fence.${want}${m[2]}.cluster (PTX ISA §9.7.13.4)` };
  } else if (sem === 'acquire' || sem === 'release') {
    // The one-way fences without .sync_restrict (PTX 8.6+) are valid at every scope.
  }
  return { spec, fields: { sem, scope } };
}

/**
 * Any instruction spelled with its PTX qualifiers: the mbarrier family
 * (`mbarrier.try_wait.parity.acquire.cta.shared::cta.b64`, `mbarrier.init.shared::cta.b64`,
 * `mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64`, …), cluster barriers, named
 * barriers, thread fences and the reductions' operator (`red.async.add`; ops-reduce.ts). Returns
 * undefined when `mnemonic` is none of these forms.
 */
export function parseQualifiers(mnemonic: string): Qualified | undefined {
  const red = /^(red\.async|cp\.reduce\.)/.test(mnemonic) ? parseReduction(mnemonic, (n) => BY_NAME.get(n)!) : undefined;
  if (red) return red;
  if (mnemonic.startsWith('mbarrier.')) return parseMbarrier(mnemonic);
  if (mnemonic.startsWith('barrier.cluster.')) return parseClusterBarrier(mnemonic);
  if (mnemonic.startsWith('bar')) return parseNamedBarrier(mnemonic);
  if (mnemonic.startsWith('fence') || mnemonic.startsWith('membar.')) return parseFence(mnemonic);
  return parseValueOp(mnemonic, (n) => BY_NAME.get(n)!);
}

/** The `mbarrier.arrive` family with PTX qualifiers (see {@link parseQualifiers}). */
export function parseArriveQualifiers(mnemonic: string): Qualified | undefined {
  const q = parseQualifiers(mnemonic);
  return q && q.spec.name.startsWith('mbarrier.arrive') ? q : undefined;
}

/** Spellings with PTX qualifiers offered next to the canonical names (did-you-mean, completion). */
const SPELLINGS = [
  'barrier.cluster.arrive.release', 'barrier.cluster.arrive.relaxed', 'barrier.cluster.arrive.aligned',
  'barrier.cluster.arrive.release.aligned', 'barrier.cluster.arrive.relaxed.aligned',
  'barrier.cluster.wait.acquire', 'barrier.cluster.wait.aligned', 'barrier.cluster.wait.acquire.aligned',
  'barrier.sync', 'barrier.sync.aligned', 'barrier.arrive', 'barrier.arrive.aligned',
  'fence.acq_rel.cta', 'fence.acq_rel.cluster', 'fence.acq_rel.gpu', 'fence.acq_rel.sys',
  'fence.sc.cta', 'fence.sc.cluster', 'fence.sc.gpu', 'fence.sc.sys',
  'fence.release.sync_restrict::shared::cta.cluster', 'fence.acquire.sync_restrict::shared::cluster.cluster',
  'membar.cta', 'membar.gl', 'membar.sys',
  ...VALUE_SPELLINGS,
];

/** Every mnemonic the language knows (for did-you-mean hints). */
export const MNEMONICS: string[] = [...OPS.map((o) => o.name), ...Object.keys(ALIASES), ...SPELLINGS];
