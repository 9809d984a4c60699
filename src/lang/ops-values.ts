/**
 * The sketch operations of values, global memory and cluster launch control (docs/LANGUAGE.md,
 * "Values, global memory and cluster launch control"): their operand tables, and the PTX
 * spellings with qualifiers (`ld.acquire.gpu.global.u32`, `atom.add.u32`, `red.release.gpu.global.add`,
 * `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128`, …) mapped
 * to them with the fields they set.
 */
import type { AtomOp, BarRef, BufRef, Expr, MemScope, Op, SpinCmp } from '../kernel/ir.js';
import type { OpSpec } from './ops.js';
import type { Qualified } from './ops-spelling.js';

const bufA = (v: unknown) => v as BufRef;
const intA = (v: unknown) => v as Expr;

const ATOM_OPS: readonly AtomOp[] = ['add', 'exch', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor', 'cas'];
const CMPS: readonly SpinCmp[] = ['eq', 'ne', 'ge', 'gt', 'le', 'lt'];
const SCOPE = '(?:\\.(cta|cluster|gpu|sys))?';
const TYPE = '(?:\\.(?:u32|s32|b32|u64|s64|b64))?';

/** The canonical operations (the spellings below map to them). */
export const VALUE_SPECS: OpSpec[] = [
  {
    name: 'ld.global', args: ['buf'], dest: 'result', usage: 'G',
    build(a) {
      const op: Op = { op: 'ld.global', buf: bufA(a.v[0]) };
      if (a.dest !== undefined) op.dest = a.dest;
      return op;
    },
  },
  { name: 'st.global', args: ['buf', 'int'], usage: 'G, VALUE', build: (a) => ({ op: 'st.global', buf: bufA(a.v[0]), value: intA(a.v[1]) }) },
  {
    name: 'ld.acquire.gpu.global', args: ['buf'], dest: 'result', usage: 'G',
    build(a) {
      const op: Op = { op: 'ld.strong', buf: bufA(a.v[0]), sem: 'acquire', scope: 'gpu' };
      if (a.dest !== undefined) op.dest = a.dest;
      return op;
    },
  },
  { name: 'st.release.gpu.global', args: ['buf', 'int'], usage: 'G, VALUE', build: (a) => ({ op: 'st.strong', buf: bufA(a.v[0]), value: intA(a.v[1]), sem: 'release', scope: 'gpu' }) },
  {
    name: 'atom.global.add', args: ['buf', 'int'], dest: 'result', usage: 'G, VALUE',
    build(a) {
      const op: Op = { op: 'atom.global', buf: bufA(a.v[0]), red: false, aop: 'add', value: intA(a.v[1]), sem: 'relaxed', scope: 'gpu' };
      if (a.dest !== undefined) op.dest = a.dest;
      return op;
    },
  },
  {
    name: 'atom.global.cas', args: ['buf', 'int', 'int'], dest: 'result', usage: 'G, COMPARE, VALUE',
    build(a) {
      const op: Op = { op: 'atom.global', buf: bufA(a.v[0]), red: false, aop: 'cas', compare: intA(a.v[1]), value: intA(a.v[2]), sem: 'relaxed', scope: 'gpu' };
      if (a.dest !== undefined) op.dest = a.dest;
      return op;
    },
  },
  { name: 'red.global.add', args: ['buf', 'int'], usage: 'G, VALUE', build: (a) => ({ op: 'atom.global', buf: bufA(a.v[0]), red: true, aop: 'add', value: intA(a.v[1]), sem: 'relaxed', scope: 'gpu' }) },
  {
    name: 'spin.acquire.gpu.ge', args: ['buf', 'int'], dest: 'result', usage: 'G, TARGET',
    build(a) {
      const op: Op = { op: 'spin.global', buf: bufA(a.v[0]), cmp: 'ge', target: intA(a.v[1]), sem: 'acquire', scope: 'gpu' };
      if (a.dest !== undefined) op.dest = a.dest;
      return op;
    },
  },
  { name: 'clusterlaunchcontrol.try_cancel', args: ['buf', 'bar'], usage: 'RESP, BAR', build: (a) => ({ op: 'clc.try_cancel', dst: bufA(a.v[0]), bar: a.v[1] as BarRef, multicast: false }) },
  { name: 'clusterlaunchcontrol.try_cancel.multicast::cluster::all', args: ['buf', 'bar'], usage: 'RESP, BAR', build: (a) => ({ op: 'clc.try_cancel', dst: bufA(a.v[0]), bar: a.v[1] as BarRef, multicast: true }) },
  { name: 'clusterlaunchcontrol.query_cancel.is_canceled', args: ['buf'], dest: 'required', usage: 'RESP', build: (a) => ({ op: 'clc.query', src: bufA(a.v[0]), what: 'is_canceled', dest: a.dest! }) },
  { name: 'clusterlaunchcontrol.query_cancel.get_first_ctaid', args: ['buf'], dest: 'required', usage: 'RESP', build: (a) => ({ op: 'clc.query', src: bufA(a.v[0]), what: 'first_ctaid', dest: a.dest! }) },
];

/** Spellings offered next to the canonical names (did-you-mean, completion). */
export const VALUE_SPELLINGS = [
  'ld.relaxed.gpu.global', 'st.relaxed.gpu.global', 'atom.acq_rel.gpu.global.add', 'atom.global.exch', 'atom.global.inc',
  'red.release.gpu.global.add', 'spin.acquire.gpu.eq', 'spin.relaxed.gpu.ge',
  'clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128',
  'clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128',
  'clusterlaunchcontrol.query_cancel.is_canceled.pred.b128', 'clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128',
];

type Lookup = (name: string) => OpSpec;

/** A strong operation needs its scope written (PTX ISA §9.7.9.8, §8.5: `.relaxed` / `.acquire` / `.release` take `.scope`). */
const needsScope = (m: string, sem: string) => `${m}: .${sem} needs a scope (.cta, .cluster, .gpu or .sys), e.g. ${m.replace(`.${sem}`, `.${sem}.gpu`)} (PTX ISA §8.5)`;

/** `ld` / `st` of a global location: weak (no semantics), or strong with a scope; `.volatile` is `.relaxed.sys`. */
function loadStore(m: string, get: Lookup): Qualified | undefined {
  const r = new RegExp(`^(ld|st)(?:\\.(weak|relaxed|acquire|release|volatile))?${SCOPE}\\.global${TYPE}$`).exec(m);
  if (!r) return undefined;
  const ld = r[1] === 'ld';
  const sem = r[2] === 'volatile' ? 'relaxed' : r[2];
  const scope = (r[2] === 'volatile' ? 'sys' : r[3]) as MemScope | undefined;
  if (!sem || sem === 'weak') {
    if (scope) return { spec: get(ld ? 'ld.global' : 'st.global'), invalid: `${m}: a weak ${r[1]} takes no scope (PTX ISA §9.7.9.${ld ? 8 : 11})` };
    return { spec: get(ld ? 'ld.global' : 'st.global') };
  }
  const spec = get(ld ? 'ld.acquire.gpu.global' : 'st.release.gpu.global');
  if (sem === (ld ? 'release' : 'acquire')) return { spec, invalid: `${m}: ${r[1]} takes .relaxed or .${ld ? 'acquire' : 'release'}, not .${sem} (PTX ISA §9.7.9.${ld ? 8 : 11})` };
  if (!scope) return { spec, invalid: needsScope(m, sem) };
  return { spec, fields: { sem, scope } };
}

/** `atom{.sem}{.scope}{.global}.op{.type}` and `red{.sem}{.scope}{.global}.op{.type}` (PTX ISA §9.7.13.5, §9.7.13.6). */
function atomic(m: string, get: Lookup): Qualified | undefined {
  const r = new RegExp(`^(atom|red)(?:\\.(relaxed|acquire|release|acq_rel))?${SCOPE}(?:\\.global)?\\.(\\w+)${TYPE}$`).exec(m);
  if (!r) return undefined;
  const red = r[1] === 'red';
  const aop = r[4]!;
  const spec = get(red ? 'red.global.add' : aop === 'cas' ? 'atom.global.cas' : 'atom.global.add');
  if (aop === 'cas' && red) return { spec, invalid: `${m}: red has no .cas; write atom.cas, whose old value is the result (PTX ISA §9.7.13.6)` };
  if (!(ATOM_OPS as readonly string[]).includes(aop)) return undefined; // red.async and other instructions
  const sem = r[2] ?? 'relaxed';
  if (aop === 'cas') return { spec, fields: { sem, scope: r[3] ?? 'gpu' } };
  if (red && (sem === 'acquire' || sem === 'acq_rel')) return { spec, invalid: `${m}: red takes .relaxed or .release, not .${sem} (PTX ISA §9.7.13.6)` };
  return { spec, fields: { aop, sem, scope: r[3] ?? 'gpu' } };
}

/** `spin{.relaxed|.acquire}{.scope}{.global}.cmp`: a spin loop of strong loads (no PTX instruction of its own). */
function spin(m: string, get: Lookup): Qualified | undefined {
  const r = new RegExp(`^spin(?:\\.(relaxed|acquire))?${SCOPE}(?:\\.global)?\\.(\\w+)$`).exec(m);
  if (!r) return undefined;
  const spec = get('spin.acquire.gpu.ge');
  if (!(CMPS as readonly string[]).includes(r[3]!)) return { spec, invalid: `${m}: the comparison .${r[3]} is not one of ${CMPS.map((c) => `.${c}`).join(', ')}` };
  return { spec, fields: { sem: r[1] ?? 'acquire', scope: r[2] ?? 'gpu', cmp: r[3]! } };
}

/** The cluster launch control spellings (PTX ISA §9.7.13.17, §9.7.13.18). */
function clc(m: string, get: Lookup): Qualified | undefined {
  const t = /^clusterlaunchcontrol\.try_cancel(?:\.async(?:\.shared::cta)?\.mbarrier::complete_tx::bytes)?(\.multicast::cluster::all)?(?:\.b128)?$/.exec(m);
  if (t) return { spec: get(t[1] ? 'clusterlaunchcontrol.try_cancel.multicast::cluster::all' : 'clusterlaunchcontrol.try_cancel') };
  if (/^clusterlaunchcontrol\.query_cancel\.is_canceled(?:\.pred)?(?:\.b128)?$/.test(m)) return { spec: get('clusterlaunchcontrol.query_cancel.is_canceled') };
  const g = /^clusterlaunchcontrol\.query_cancel\.get_first_ctaid(::[xyz]|\.v4)?(?:\.b32)?(?:\.b128)?$/.exec(m);
  if (!g) return undefined;
  const spec = get('clusterlaunchcontrol.query_cancel.get_first_ctaid');
  if (g[1] === '::y' || g[1] === '::z') return { spec, invalid: `${m}: the model numbers CTAs in one dimension; write get_first_ctaid::x (or .v4, whose first element is x) (PTX ISA §9.7.13.18)` };
  return { spec };
}

/**
 * A value, global-memory or launch-control instruction spelled with PTX qualifiers, or undefined
 * when `mnemonic` is none of those forms (`get` finds a canonical operation by name).
 */
export function parseValueOp(mnemonic: string, get: Lookup): Qualified | undefined {
  if (mnemonic.startsWith('ld.') || mnemonic.startsWith('st.')) return loadStore(mnemonic, get);
  if (mnemonic.startsWith('atom.') || mnemonic.startsWith('red.')) return atomic(mnemonic, get);
  if (mnemonic.startsWith('spin.')) return spin(mnemonic, get);
  if (mnemonic.startsWith('clusterlaunchcontrol.')) return clc(mnemonic, get);
  return undefined;
}
