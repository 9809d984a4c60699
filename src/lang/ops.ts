/**
 * The operation table of the sketch language: for each mnemonic its operands, options, result and
 * the IR operation it builds. docs/LANGUAGE.md documents the same table.
 */
import type { Arch, BarRef, BufRef, Expr, MmaShape, Op, Per } from '../kernel/ir.js';
import { parseReduction, REDUCTION_ALIASES } from './ops-reduce.js';
import { parseValueOp, VALUE_SPECS, VALUE_SPELLINGS } from './ops-values.js';

/** Kinds of positional operands: a barrier reference, a buffer reference, an integer, a variable. */
export type OperandKind = 'bar' | 'buf' | 'int' | 'var';

/** Option keys operations accept. */
export type OpOptionKey = 'per' | 'multicast' | 'chunks' | 'shape' | 'value';

/** Values handed to an operation's builder. */
export interface OpArgs {
  /** Positional operands in order (undefined where an optional one is absent). */
  v: (BarRef | BufRef | Expr | string | undefined)[];
  /** Extra buffer operands of variadic operations (MMA reads). */
  rest: BufRef[];
  per?: Per;
  multicast?: Expr;
  chunks?: Expr;
  /** `value=E` of `st.shared`: the small integer the store writes (machine/values.ts). */
  value?: Expr;
  shape?: MmaShape;
  /** The variable left of `=`. */
  dest?: string;
  /** `.release` / `.relaxed` (mbarrier.arrive family) or `.acquire` / `.relaxed` (waits) written on the mnemonic. */
  sem?: 'release' | 'relaxed' | 'acquire';
  /** `.cta` / `.cluster` written on the mnemonic (mbarrier.arrive family and waits). */
  scope?: 'cta' | 'cluster';
}

/** What an operation accepts and builds. */
export interface OpSpec {
  /** Canonical mnemonic. */
  name: string;
  /** Positional operands; the last `optional` of them may be left out. */
  args: OperandKind[];
  optional?: number;
  /** More buffer operands may follow (MMA operand lists). */
  variadic?: boolean;
  options?: OpOptionKey[];
  /** Options that must be given. */
  required?: OpOptionKey[];
  /** `x = op ...`: 'token' (the arrive's state), 'result' (a test's 0/1), 'required' (must have one). */
  dest?: 'token' | 'result' | 'required';
  /** Architecture the instruction exists on (absent: both). */
  arch?: Arch;
  /** Operand names for messages, e.g. `BAR, BYTES[, COUNT]`. */
  usage: string;
  build(a: OpArgs): Op;
}

const bar = (a: OpArgs, i: number) => a.v[i] as BarRef;
const buf = (a: OpArgs, i: number) => a.v[i] as BufRef;
const int = (a: OpArgs, i: number) => a.v[i] as Expr;

function arriveSpec(drop: boolean, expect: boolean, noComplete: boolean): OpSpec {
  const name = `mbarrier.${drop ? 'arrive_drop' : 'arrive'}${expect ? '.expect_tx' : ''}${noComplete ? '.noComplete' : ''}`;
  const args: OperandKind[] = expect ? ['bar', 'int', 'int'] : ['bar', 'int'];
  return {
    name,
    args,
    optional: noComplete ? 0 : 1,
    options: ['per'],
    dest: 'token',
    usage: `BAR${expect ? ', BYTES' : ''}${noComplete ? ', COUNT' : '[, COUNT]'}`,
    build(a) {
      const op: Extract<Op, { op: 'mbarrier.arrive' }> = { op: 'mbarrier.arrive', bar: bar(a, 0) };
      if (drop) op.drop = true;
      if (expect) op.expectTx = int(a, 1);
      const count = a.v[expect ? 2 : 1] as Expr | undefined;
      if (count) op.count = count;
      if (noComplete) op.noComplete = true;
      if (a.dest !== undefined) op.token = a.dest;
      if (a.per) op.per = a.per;
      if (a.sem === 'release' || a.sem === 'relaxed') op.sem = a.sem;
      if (a.scope) op.scope = a.scope;
      return op;
    },
  };
}

function waitSpec(form: 'try_wait' | 'test_wait', token: boolean): OpSpec {
  return {
    name: `mbarrier.${form}${token ? '' : '.parity'}`,
    args: ['bar', token ? 'var' : 'int'],
    dest: 'result',
    usage: token ? 'BAR, TOKEN' : 'BAR, PARITY',
    build(a) {
      const op: Extract<Op, { op: 'mbarrier.wait' }> = { op: 'mbarrier.wait', form, bar: bar(a, 0) };
      if (token) op.token = a.v[1] as string;
      else op.parity = int(a, 1);
      if (a.dest !== undefined) op.dest = a.dest;
      if (a.sem === 'acquire' || a.sem === 'relaxed') op.sem = a.sem;
      if (a.scope) op.scope = a.scope;
      return op;
    },
  };
}

function bulkSpec(tensor: boolean): OpSpec {
  return {
    name: tensor ? 'cp.async.bulk.tensor' : 'cp.async.bulk',
    args: ['buf', 'int', 'bar'],
    options: ['multicast', 'chunks', 'per'],
    usage: 'DST, BYTES, BAR [multicast=MASK] [chunks=N]',
    build(a) {
      const op: Extract<Op, { op: 'cp.async.bulk' }> = { op: 'cp.async.bulk', tensor, dst: buf(a, 0), bytes: int(a, 1), bar: bar(a, 2) };
      if (a.multicast) op.multicast = a.multicast;
      if (a.chunks) op.chunks = a.chunks;
      if (a.per) op.per = a.per;
      return op;
    },
  };
}

const simple = (name: string, op: Op, arch?: Arch): OpSpec => ({ name, args: [], usage: '', build: () => ({ ...op }), ...(arch ? { arch } : {}) });

/** The asynchronous copy family beyond TMA loads and bulk stores: cp.async groups, st.async / red.async, DSMEM and reduction copies, prefetches. */
function asyncCopySpecs(): OpSpec[] {
  const store = (red: boolean): OpSpec => ({
    name: `${red ? 'red' : 'st'}.async`, args: ['buf', 'int', 'bar'], options: ['per'], usage: 'DST, BYTES, BAR',
    build(a) {
      const op: Extract<Op, { op: 'st.async' }> = { op: 'st.async', red, dst: buf(a, 0), bytes: int(a, 1), bar: bar(a, 2) };
      if (a.per) op.per = a.per;
      return op;
    },
  });
  const reduce = (tensor: boolean): OpSpec => ({
    name: `cp.reduce.async.bulk${tensor ? '.tensor' : ''}`, args: ['buf', 'int'], options: ['per'], usage: 'SRC, BYTES',
    build(a) {
      const op: Extract<Op, { op: 'cp.reduce.async.bulk' }> = { op: 'cp.reduce.async.bulk', tensor, src: buf(a, 0), bytes: int(a, 1) };
      if (a.per) op.per = a.per;
      return op;
    },
  });
  return [
    simple('cp.async.commit_group', { op: 'cp.async.commit_group' }),
    { name: 'cp.async.wait_group', args: ['int'], usage: 'N', build: (a) => ({ op: 'cp.async.wait_group', n: int(a, 0), all: false }) },
    simple('cp.async.wait_all', { op: 'cp.async.wait_group', n: { k: 'num', v: 0 }, all: true }),
    store(false),
    store(true),
    {
      name: 'cp.async.bulk.shared::cluster', args: ['buf', 'buf', 'int', 'bar'], options: ['per'], usage: 'DST, SRC, BYTES, BAR',
      build(a) {
        const op: Extract<Op, { op: 'cp.async.bulk.shared::cluster' }> = { op: 'cp.async.bulk.shared::cluster', dst: buf(a, 0), src: buf(a, 1), bytes: int(a, 2), bar: bar(a, 3) };
        if (a.per) op.per = a.per;
        return op;
      },
    },
    reduce(false),
    reduce(true),
    { name: 'cp.async.bulk.prefetch', args: ['int'], usage: 'BYTES', build: (a) => ({ op: 'cp.async.bulk.prefetch', tensor: false, bytes: int(a, 0) }) },
    { name: 'cp.async.bulk.prefetch.tensor', args: ['int'], usage: 'BYTES', build: (a) => ({ op: 'cp.async.bulk.prefetch', tensor: true, bytes: int(a, 0) }) },
  ];
}

/** Every operation, by canonical mnemonic. */
export const OPS: OpSpec[] = [
  {
    name: 'mbarrier.init', args: ['bar', 'int'], optional: 1, usage: 'BAR[, COUNT]',
    build(a) {
      const op: Op = { op: 'mbarrier.init', bar: bar(a, 0) };
      if (a.v[1]) op.count = int(a, 1);
      return op;
    },
  },
  { name: 'mbarrier.inval', args: ['bar'], usage: 'BAR', build: (a) => ({ op: 'mbarrier.inval', bar: bar(a, 0) }) },
  ...[false, true].flatMap((drop) => [false, true].flatMap((expect) => [false, true].map((nc) => arriveSpec(drop, expect, nc)))),
  {
    name: 'mbarrier.expect_tx', args: ['bar', 'int'], options: ['per'], usage: 'BAR, BYTES',
    build(a) {
      const op: Op = { op: 'mbarrier.expect_tx', bar: bar(a, 0), bytes: int(a, 1) };
      if (a.per) op.per = a.per;
      return op;
    },
  },
  {
    name: 'mbarrier.complete_tx', args: ['bar', 'int'], options: ['per'], usage: 'BAR, BYTES',
    build(a) {
      const op: Op = { op: 'mbarrier.complete_tx', bar: bar(a, 0), bytes: int(a, 1) };
      if (a.per) op.per = a.per;
      return op;
    },
  },
  waitSpec('try_wait', false),
  waitSpec('test_wait', false),
  waitSpec('try_wait', true),
  waitSpec('test_wait', true),
  {
    name: 'mbarrier.pending_count', args: ['var'], dest: 'required', usage: 'TOKEN',
    build: (a) => ({ op: 'mbarrier.pending_count', token: a.v[0] as string, dest: a.dest! }),
  },
  bulkSpec(true),
  bulkSpec(false),
  {
    name: 'cp.async.bulk.store', args: ['buf', 'int'], options: ['per'], usage: 'SRC, BYTES',
    build(a) {
      const op: Op = { op: 'cp.async.bulk.store', src: buf(a, 0), bytes: int(a, 1) };
      if (a.per) op.per = a.per;
      return op;
    },
  },
  simple('cp.async.bulk.commit_group', { op: 'cp.async.bulk.commit_group' }),
  { name: 'cp.async.bulk.wait_group', args: ['int'], usage: 'N', build: (a) => ({ op: 'cp.async.bulk.wait_group', n: int(a, 0), read: false }) },
  { name: 'cp.async.bulk.wait_group.read', args: ['int'], usage: 'N', build: (a) => ({ op: 'cp.async.bulk.wait_group', n: int(a, 0), read: true }) },
  {
    name: 'tcgen05.mma', args: ['buf', 'buf'], variadic: true, options: ['shape'], required: ['shape'], arch: 'sm_100a',
    usage: 'ACC, A[, B...] shape=MxNxK',
    build: (a) => ({ op: 'tcgen05.mma', reads: [buf(a, 1), ...a.rest], acc: buf(a, 0), shape: a.shape! }),
  },
  {
    name: 'tcgen05.mma.cta_group::2', args: ['buf', 'buf'], variadic: true, options: ['shape'], required: ['shape'], arch: 'sm_100a',
    usage: 'ACC, A[, B...] shape=MxNxK',
    build: (a) => ({ op: 'tcgen05.mma', reads: [buf(a, 1), ...a.rest], acc: buf(a, 0), shape: a.shape!, pair: true }),
  },
  {
    name: 'tcgen05.commit', args: ['bar'], options: ['multicast'], arch: 'sm_100a', usage: 'BAR [multicast=MASK]',
    build(a) {
      const op: Op = { op: 'tcgen05.commit', bar: bar(a, 0) };
      if (a.multicast) op.multicast = a.multicast;
      return op;
    },
  },
  { name: 'tcgen05.ld', args: ['buf'], arch: 'sm_100a', usage: 'SRC', build: (a) => ({ op: 'tcgen05.ld', src: buf(a, 0) }) },
  // tcgen05: Tensor Memory management, data movement and fences (PTX ISA §9.7.16.7–§9.7.16.11).
  { name: 'tcgen05.alloc', args: ['buf'], arch: 'sm_100a', usage: 'TMEM', build: (a) => ({ op: 'tcgen05.alloc', buf: buf(a, 0) }) },
  { name: 'tcgen05.dealloc', args: ['buf'], arch: 'sm_100a', usage: 'TMEM', build: (a) => ({ op: 'tcgen05.dealloc', buf: buf(a, 0) }) },
  { ...simple('tcgen05.relinquish_alloc_permit', { op: 'tcgen05.relinquish_alloc_permit' }, 'sm_100a') },
  // `.cta_group::2`: the pair of CTAs (ranks 2p, 2p + 1) allocates together (PTX ISA §9.7.16.7.1).
  { name: 'tcgen05.alloc.cta_group::2', args: ['buf'], arch: 'sm_100a', usage: 'TMEM', build: (a) => ({ op: 'tcgen05.alloc', buf: buf(a, 0), pair: true }) },
  { name: 'tcgen05.dealloc.cta_group::2', args: ['buf'], arch: 'sm_100a', usage: 'TMEM', build: (a) => ({ op: 'tcgen05.dealloc', buf: buf(a, 0), pair: true }) },
  { ...simple('tcgen05.relinquish_alloc_permit.cta_group::2', { op: 'tcgen05.relinquish_alloc_permit', pair: true }, 'sm_100a') },
  { name: 'tcgen05.ld.sync.aligned', args: ['buf'], arch: 'sm_100a', usage: 'SRC', build: (a) => ({ op: 'tcgen05.ld.async', src: buf(a, 0) }) },
  { name: 'tcgen05.st', args: ['buf'], arch: 'sm_100a', usage: 'DST', build: (a) => ({ op: 'tcgen05.st', dst: buf(a, 0) }) },
  simple('tcgen05.wait::ld', { op: 'tcgen05.wait::ld' }, 'sm_100a'),
  simple('tcgen05.wait::st', { op: 'tcgen05.wait::st' }, 'sm_100a'),
  { name: 'tcgen05.cp', args: ['buf', 'buf'], arch: 'sm_100a', usage: 'DST, SRC', build: (a) => ({ op: 'tcgen05.cp', dst: buf(a, 0), src: buf(a, 1) }) },
  { name: 'tcgen05.shift', args: ['buf'], arch: 'sm_100a', usage: 'TMEM', build: (a) => ({ op: 'tcgen05.shift', buf: buf(a, 0) }) },
  simple('tcgen05.fence::before_thread_sync', { op: 'tcgen05.fence::before_thread_sync' }, 'sm_100a'),
  simple('tcgen05.fence::after_thread_sync', { op: 'tcgen05.fence::after_thread_sync' }, 'sm_100a'),
  {
    name: 'wgmma.mma_async', args: ['buf'], variadic: true, options: ['shape'], required: ['shape'], arch: 'sm_90a',
    usage: 'A[, B...] shape=MxNxK',
    build: (a) => ({ op: 'wgmma.mma_async', reads: [buf(a, 0), ...a.rest], shape: a.shape! }),
  },
  simple('wgmma.commit_group', { op: 'wgmma.commit_group' }, 'sm_90a'),
  { name: 'wgmma.wait_group', args: ['int'], arch: 'sm_90a', usage: 'N', build: (a) => ({ op: 'wgmma.wait_group', n: int(a, 0) }) },
  { name: 'cp.async', args: ['buf', 'int'], usage: 'DST, BYTES', build: (a) => ({ op: 'cp.async', dst: buf(a, 0), bytes: int(a, 1) }) },
  { name: 'cp.async.mbarrier.arrive', args: ['bar'], usage: 'BAR', build: (a) => ({ op: 'cp.async.mbarrier.arrive', bar: bar(a, 0), noinc: false }) },
  { name: 'cp.async.mbarrier.arrive.noinc', args: ['bar'], usage: 'BAR', build: (a) => ({ op: 'cp.async.mbarrier.arrive', bar: bar(a, 0), noinc: true }) },
  {
    name: 'bar.sync', args: ['int', 'int'], optional: 1, usage: 'ID[, THREADS]',
    build(a) {
      const op: Op = { op: 'bar.sync', id: int(a, 0) };
      if (a.v[1]) op.threads = int(a, 1);
      return op;
    },
  },
  { name: 'bar.arrive', args: ['int', 'int'], usage: 'ID, THREADS', build: (a) => ({ op: 'bar.arrive', id: int(a, 0), threads: int(a, 1) }) },
  simple('fence.proxy.async', { op: 'fence.proxy.async' }),
  simple('fence.mbarrier_init', { op: 'fence.mbarrier_init' }),
  simple('barrier.cluster.arrive', { op: 'barrier.cluster.arrive' }),
  simple('barrier.cluster.wait', { op: 'barrier.cluster.wait' }),
  simple('fence', { op: 'fence', sem: 'acq_rel', scope: 'cta' }),
  {
    name: 'ld.shared', args: ['buf', 'int'], optional: 1, dest: 'result', usage: 'BUF[, BYTES]',
    build(a) {
      const op: Op = { op: 'ld.shared', buf: buf(a, 0) };
      if (a.v[1]) op.bytes = int(a, 1);
      if (a.dest !== undefined) op.dest = a.dest;
      return op;
    },
  },
  {
    name: 'st.shared', args: ['buf', 'int'], optional: 1, options: ['value'], usage: 'BUF[, BYTES] [value=E]',
    build(a) {
      const op: Op = { op: 'st.shared', buf: buf(a, 0) };
      if (a.v[1]) op.bytes = int(a, 1);
      if (a.value) op.value = a.value;
      return op;
    },
  },
  { name: 'work', args: ['int'], usage: 'CYCLES', build: (a) => ({ op: 'work', cycles: int(a, 0) }) },
  simple('exit', { op: 'exit' }),
  ...asyncCopySpecs(),
  ...VALUE_SPECS,
];

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
