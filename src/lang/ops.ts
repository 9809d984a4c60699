/**
 * The operation table of the sketch language: for each mnemonic its operands, options, result and
 * the IR operation it builds. docs/LANGUAGE.md documents the same table. The spellings that name
 * an operation (aliases, PTX qualifiers) and the lookup by mnemonic are in ops-spelling.ts.
 */
import type { Arch, BarRef, BufRef, Expr, MmaShape, Op, Per } from '../kernel/ir.js';
import { VALUE_SPECS } from './ops-values.js';

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
