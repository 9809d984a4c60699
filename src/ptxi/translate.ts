/**
 * The PTX front end's translation: one `.entry` of a parsed module plus a launch (block, cluster,
 * grid, parameter values, tensor-map box sizes, dynamic shared memory) becomes a {@link Kernel} of
 * the IR, which the machine instantiates and runs like any sketch. One role of `block / 32` warps,
 * each warp an agent; lanes, the active mask, divergence and reconvergence, spin loops: docs/PTX.md.
 *
 * Errors in the input that make a translation impossible throw {@link KernelError} with the PTX
 * position; what is only impossible to model when executed becomes a `trap` operation there.
 */
import { didYouMean } from '../kernel/nearest.js';
import { descriptorReads } from './desc.js';
import type { Expr, Kernel, SrcLoc, Stmt } from '../kernel/ir.js';
import { KernelError } from '../machine/program.js';
import type { Func, Module } from '../ptx/ast.js';
import { functions } from '../ptx/resolve.js';
import { analyze, destsOf, withSharedWhy, type Facts } from './analysis.js';
import { address, bin, MissingParam, num, NotModelled, v, type Lane } from './emit.js';
import { buildCfg, flatten } from './flat.js';
import type { InsEnv } from './insn.js';
import { emitBody } from './body.js';
import { valueArrays } from './smem-values.js';
import { layoutShared, sharedSizes, PARAM_BASE, paramValues, tensorBox, sharedDecls, shortName, type ParamInfo, type SharedSym } from './layout.js';
import { sharedRefs } from './refs.js';
import { memorySpaces } from './generic.js';
import { flagOf, flagParams, GMEM_WORDS } from './gmem.js';
import { demangle, namesEntry } from './names.js';
import { launchConst, type LaunchParams } from './launch-const.js';
import type { ConstOf } from './mixed.js';
import { defsOf, descriptorRoot, paramAddress, paramFieldsRead, setDefs, staticInt, tmemDecl, tmemOf, tokenRoot, type TmemInfo } from './defs.js';

/** A launch of a PTX kernel (the host side that no PTX file carries). */
export interface PtxLaunch {
  /** Entry name (full or demangled prefix); default: the only `.entry`. */
  kernel?: string;
  /**
   * Threads per CTA: `N` or the block's dimensions `[x, y, z]` (`[64, 2]`: 64 × 2 × 1), whose
   * product is a multiple of 32 (whole warps); default: `.reqntid` / `.maxntid`.
   */
  block?: number | readonly number[];
  cluster?: number;
  grid?: number;
  /** Integer parameter values by PTX name, `param_N` or index N; a field of a struct parameter by `KEY+BYTE_OFFSET` (`param_0+640`). */
  params?: Record<string, number>;
  /** Bytes one TMA load through the tensor-map parameter delivers (its box), by name, `param_N` or index. */
  tensorMaps?: Record<string, number>;
  /** Bytes of dynamic shared memory (the `extern .shared` array). */
  dynamicSmem?: number;
}

/** Figures of a translation. */
export interface PtxStats {
  entry: string;
  instructions: number;
  blocks: number;
  /** Lane-varying registers (32 variables each). */
  varying: number;
  irStatements: number;
}

/** Translates `m` for `launch` (see the module comment). */
export function translatePtx(m: Module, launch: PtxLaunch = {}): { kernel: Kernel; stats: PtxStats } {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);
  if (typeof m !== 'object' || m === null || !Array.isArray((m as Partial<Module>).items)) throw new TypeError(`translatePtx: module must be a PTX Module (parsePtx(...).module), got ${kind(m)}`);
  if (typeof launch !== 'object' || launch === null || Array.isArray(launch)) throw new TypeError(`translatePtx: launch must be an object ({ kernel, block, cluster, grid, params, tensorMaps, dynamicSmem }), got ${kind(launch)}`);
  const OPTIONS = ['kernel', 'block', 'cluster', 'grid', 'params', 'tensorMaps', 'dynamicSmem'];
  for (const k of Object.keys(launch)) {
    if (OPTIONS.includes(k)) continue;
    const near = didYouMean(k.replace(/[-_]/g, ''), OPTIONS) ?? (/^param/i.test(k) ? 'params' : /^tensor/i.test(k) ? 'tensorMaps' : undefined);
    throw new TypeError(`translatePtx: unknown launch option '${k.slice(0, 40)}'${near ? ` (did you mean '${near}'?)` : ''}; the options are ${OPTIONS.join(', ')}`);
  }
  if (launch.kernel !== undefined && typeof launch.kernel !== 'string') throw new TypeError(`translatePtx: launch.kernel must be a string, got ${kind(launch.kernel)}`);
  for (const k of ['cluster', 'grid', 'dynamicSmem'] as const) {
    const v = launch[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)) throw new RangeError(`translatePtx: launch.${k} must be a whole number, got ${typeof v === 'number' ? v : kind(v)}`);
    if (k !== 'dynamicSmem' && v === 0) throw new RangeError(`translatePtx: launch.${k} must be at least 1, got 0`);
  }
  // The block: a thread count or its 1 to 3 dimensions (the shape itself is checked with the directives below).
  const b: unknown = launch.block;
  const whole = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  if (b !== undefined && !(whole(b) || (Array.isArray(b) && b.length >= 1 && b.length <= 3 && b.every(whole)))) {
    throw new RangeError(`translatePtx: launch.block must be a whole number or 1 to 3 whole numbers (its dimensions), got ${typeof b === 'number' ? b : Array.isArray(b) ? `[${b.slice(0, 4).map((x) => (typeof x === 'number' ? x : kind(x))).join(', ')}${b.length > 4 ? ', …' : ''}]` : kind(b)}`);
  }
  for (const k of ['params', 'tensorMaps'] as const) {
    const v = launch[k];
    if (v === undefined) continue;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new TypeError(`translatePtx: launch.${k} must be an object of names to integers, got ${kind(v)}`);
    for (const [n, x] of Object.entries(v)) if (typeof x !== 'number' || !Number.isSafeInteger(x)) throw new RangeError(`translatePtx: launch.${k}.${n.slice(0, 40)} must be an integer, got ${typeof x === 'number' ? x : kind(x)}`);
    if (k === 'tensorMaps') for (const [n, x] of Object.entries(v)) if (x < 1) throw new RangeError(`translatePtx: launch.tensorMaps.${n.slice(0, 40)} must be a positive byte count (the box), got ${x}`);
  }
  const f = pickEntry(m, launch.kernel);
  const file = m.file;
  const at = (p: { line: number; col: number }): SrcLoc => ({ file, line: p.line, col: p.col });
  const directive = launch.block === undefined ? f.directives.find((d) => d.name === '.reqntid' || d.name === '.maxntid') : undefined;
  const given = launch.block ?? directive?.args;
  if (given === undefined) throw new KernelError(`kernel ${f.name}: the block size is not in the PTX (no .reqntid / .maxntid): give --block N`, at(f.pos), 'ptx-launch');
  const dims = blockDims(given);
  launch = { ...launch, cluster: clusterOf(f, launch.cluster, at) };
  // A block from the PTX's own directive is reported there, under its name (not as --block).
  if (typeof dims === 'string') throw new KernelError(directive ? `${directive.name} ${dims.slice('--block '.length)} (give --block N to launch another size)` : dims, at(directive?.pos ?? f.pos), 'ptx-launch');
  const block = dims[0] * dims[1] * dims[2];
  checkBlock(f, dims, at);
  const cluster = clusterOf(f, launch.cluster, at);
  const flat = memorySpaces(flatten(f, m), m);
  const cfg = buildCfg(flat);
  const paramSyms = new Map<string, number>();
  f.params.forEach((p, i) => paramSyms.set(p.name, PARAM_BASE + i * 0x1000));
  const shared0 = new Set<string>();
  for (const d of [...m.items, ...flat.decls]) if (d.kind === 'decl' && d.space.startsWith('.shared')) for (const n of d.names) shared0.add(n.name);
  const symbols = new Set([...shared0, ...paramSyms.keys()]);
  const facts0 = analyze(flat, cfg, symbols, dims);
  // The arrays whose integer values the machine carries (smem-values.ts); their loads read what
  // their stores wrote, so the facts are computed again with them (lane kinds and provenance do
  // not depend on them: only opacity does).
  const values = valueArrays(flat, facts0, sharedSizes(m, flat, launch.dynamicSmem ?? 0));
  const facts = values.bytes.size ? analyze(flat, cfg, symbols, dims, values) : values.why.size ? withSharedWhy(facts0, values) : facts0;
  const boxes = Object.values(launch.tensorMaps ?? {});
  setDefs(flat, facts);
  const params = paramValues(f, launch);
  // Offsets computed from the launch's integer parameters are constants too (launch-const.ts); the
  // parameters the layout's mbarrier offsets read are fixed: another value needs another translation.
  const read = new Set<string>();
  const launchParams: LaunchParams = { isParam: (n) => paramSyms.has(n), value: (p, off) => { const d = params.get(`${p}+${off}`)?.decl; if (d) read.add(`${p}+${off}`); return d?.value; } };
  const constOf: ConstOf = (it, o) => launchConst(facts, it, o, launchParams);
  const layoutConstOf: ConstOf = (it, o) => {
    read.clear();
    const c = constOf(it, o);
    if (c !== undefined) for (const k of read) params.get(k)!.decl.fixed = `where the kernel's mbarriers sit in shared memory was computed from it (give another value with --param, which translates the kernel for it)`;
    return c;
  };
  const shared = layoutShared(m, f, flat, facts, launch.dynamicSmem ?? 0, boxes, file, layoutConstOf, values.bytes);
  const byName = new Map(shared.map((s) => [s.name, s]));
  const tmemInfo = tmemOf(flat, facts);
  const pointers = new Set(f.params.filter((p) => p.type === '.u64' || p.type === '.b64').map((p) => p.name));
  const flags = flagParams(flat, facts, pointers);
  const fields = paramFieldsRead(flat, facts, (n) => paramSyms.has(n));
  const env = insEnv(facts, byName, paramSyms, params, f, launch, dims, tmemInfo, flags, fields, constOf);
  env.values = values;
  const body = emitBody(m, flat, cfg, facts, env, at, file);
  const { barriers, buffers } = sharedDecls(shared);
  buffers.push(...tmemDecl(tmemInfo, at(f.pos)));
  for (const p of f.params) if (flags.has(p.name)) buffers.push({ name: shortName(p.name), space: 'gmem', length: num(GMEM_WORDS), bytes: num(4), init: num(0), loc: at(p.pos) });
  const name = shortName(demangle(f.name));
  const kernel: Kernel = {
    name, arch: m.targets.some((t) => t.startsWith('sm_100') || t.startsWith('sm_10')) ? 'sm_100a' : 'sm_90a',
    params: [...params.values()].map((p) => p.decl),
    cluster: num(cluster), grid: num(launch.grid ?? 1),
    barriers, buffers,
    roles: [{ name, warps: block / 32, threads: block, per: 'warp', asWritten: true, body, loc: at(f.pos) }],
    file, loc: at(f.pos),
  };
  const varying = new Set<string>();
  for (const it of flat.items) if (!('label' in it)) for (const d of destsOf(it)) if (facts.kind(d) !== 'U' && !facts.opaque(d)) varying.add(d);
  const count = (ss: Stmt[]): number => ss.reduce((n, s) => n + 1 + (s.s === 'if' ? count(s.then) + count(s.else ?? []) : 0), 0);
  return { kernel, stats: { entry: f.name, instructions: flat.items.filter((i) => !('label' in i)).length, blocks: cfg.blocks.length, varying: varying.size, irStatements: count(body) } };
}

/**
 * The CTAs of a cluster: the launch's (`given`), else the `.reqnctapercluster` directive's, else 1;
 * checked against the directives (PTX ISA "Cluster Dimension Directives"): a launch must have the
 * cluster size `.reqnctapercluster` requires, and at most `.maxclusterrank` CTAs in a cluster.
 * A mismatch is a {@link KernelError} at the directive.
 */
function clusterOf(f: Func, given: number | undefined, at: (p: { line: number; col: number }) => SrcLoc): number {
  const req = f.directives.find((d) => d.name === '.reqnctapercluster');
  const rank = f.directives.find((d) => d.name === '.maxclusterrank');
  const need = req?.args.length ? req.args.reduce((a, b) => a * b, 1) : undefined;
  const n = given ?? need ?? 1;
  if (req && need !== undefined && n !== need) throw new KernelError(`.reqnctapercluster ${req.args.join(', ')} requires clusters of ${need} CTA${need > 1 ? 's' : ''}, and the launch has ${n} (give --cluster ${need}, or no --cluster)`, at(req.pos), 'ptx-launch');
  const max = rank?.args[0];
  if (rank && max !== undefined && n > max) throw new KernelError(`.maxclusterrank ${max} allows at most ${max} CTA${max > 1 ? 's' : ''} in a cluster, and the launch has ${n} (--cluster ${n})`, at(rank.pos), 'ptx-launch');
  return n;
}

/**
 * A launch's block checked against the kernel's thread-count directives (PTX ISA "Performance-Tuning
 * Directives"): `.maxntid nx, ny, nz` bounds the threads of a CTA by the product of its extents, and
 * `.reqntid nx, ny, nz` requires exactly those dimensions (missing ones are 1). A block the directive
 * rules out could never launch; it is a {@link KernelError} at the directive.
 */
function checkBlock(f: Func, dims: BlockDims, at: (p: { line: number; col: number }) => SrcLoc): void {
  // Trailing extents of 1 dropped (128,1,1 reads as 128), the way --block is written.
  const text = (ds: readonly number[]) => ds.slice(0, ds[2] !== 1 ? 3 : ds[1] !== 1 ? 2 : 1).join(',');
  const n = dims[0] * dims[1] * dims[2];
  const max = f.directives.find((d) => d.name === '.maxntid');
  const most = max?.args.length ? max.args.reduce((a, b) => a * b, 1) : undefined;
  if (max && most !== undefined && n > most) throw new KernelError(`.maxntid ${max.args.join(', ')} allows at most ${most} threads in a CTA, and the launch's block${dims[1] === 1 && dims[2] === 1 ? '' : ` ${text(dims)}`} has ${n} (give --block ${most} or fewer, or no --block)`, at(max.pos), 'ptx-launch');
  const req = f.directives.find((d) => d.name === '.reqntid');
  if (!req?.args.length) return;
  const want = [req.args[0]!, req.args[1] ?? 1, req.args[2] ?? 1];
  if (want.some((w, i) => w !== dims[i])) throw new KernelError(`.reqntid ${req.args.join(', ')} requires blocks of ${text(want)} threads, and the launch's block is ${text(dims)} (give --block ${text(want)}, or no --block)`, at(req.pos), 'ptx-launch');
}

/** The block's dimensions `[x, y, z]`. */
export type BlockDims = readonly [number, number, number];

/**
 * The block's dimensions of a launch's `block` (`N` or `[x]`, `[x, y]`, `[x, y, z]`; missing ones
 * are 1), or the message why mbsim cannot run it: each a positive integer, x ≤ 1024, y ≤ 1024,
 * z ≤ 64 (CUDA's limits), and x · y · z whole warps, at most 1024 threads.
 */
export function blockDims(block: number | readonly number[]): BlockDims | string {
  const d = typeof block === 'number' ? [block] : [...block];
  const text = d.join(',');
  if (d.length < 1 || d.length > 3 || !d.every((n) => Number.isSafeInteger(n) && n >= 1)) return `--block ${text}: 1 to 3 positive integers (x,y,z)`;
  const [x, y = 1, z = 1] = d as [number, number?, number?];
  if (x > 1024 || y > 1024 || z > 64) return `--block ${text}: CUDA's limits are x, y ≤ 1024 and z ≤ 64`;
  const n = x * y * z;
  if (n % 32 !== 0 || n > 1024) return `--block ${text}: mbsim runs whole warps: ${d.length > 1 ? `x · y · z = ${n}, ` : ''}a multiple of 32 from 32 to 1024`;
  return [x, y, z];
}

/** The `.entry` a launch names (full or demangled name; the only one when absent); throws {@link KernelError}. */
export function pickEntry(m: Module, want: string | undefined): Func {
  if (want !== undefined && typeof want !== 'string') throw new TypeError(`pickEntry: want must be a kernel name (a string) or undefined, got ${want === null ? 'null' : typeof want}`);
  const entries = functions(m).filter((f) => f.entry && f.body);
  // Not located: no line of the file is the choice (a caret at 1:1 would point at its first comment).
  const loc = undefined;
  if (!entries.length) throw new KernelError(`${m.file} has no .entry with a body`, loc, 'ptx-launch');
  const names = entries.map((e) => `${e.name} (${demangle(e.name)})`).join(', ');
  if (want === undefined) {
    if (entries.length > 1) throw new KernelError(`${m.file} has ${entries.length} kernels: choose one with --kernel NAME (${names})`, loc, 'ptx-launch');
    return entries[0]!;
  }
  const f = entries.find((e) => e.name === want) ?? entries.find((e) => namesEntry(e.name, want));
  if (!f) throw new KernelError(`no kernel '${want}' in ${m.file} (kernels: ${names})`, loc, 'ptx-launch');
  return f;
}

/**
 * `%tid.x`, `%tid.y`, `%tid.z` of a lane in a block of `[x, y, z]` threads: the linear thread id
 * `L = 32 · warp + lane` is `tid.x + tid.y · x + tid.z · x · y` (CUDA's rule: warps are consecutive
 * linear ids). When x is whole warps, `tid.y` and `tid.z` are the warp's (no lane in them), and
 * `tid.x` is `32 · (warp mod x/32) + lane`; else they are computed from L per lane.
 */
export function threadIndex([x, y, z]: BlockDims): Record<'%tid.x' | '%tid.y' | '%tid.z', (l: Lane) => Expr> {
  const laneE = (l: Lane): Expr => (l === 'lead' ? v('%lead') : num(l));
  const lin = (l: Lane): Expr => bin('+', bin('*', v('warp'), num(32)), laneE(l));
  const zero = () => num(0);
  if (x % 32 === 0) {
    const wx = x / 32;
    return {
      '%tid.x': (l) => (y * z === 1 ? lin(l) : bin('+', bin('*', wx === 1 ? num(0) : bin('%', v('warp'), num(wx)), num(32)), laneE(l))),
      '%tid.y': y === 1 ? zero : () => bin('%', wx === 1 ? v('warp') : bin('/', v('warp'), num(wx)), num(y)),
      '%tid.z': z === 1 ? zero : () => bin('/', v('warp'), num(wx * y)),
    };
  }
  return {
    '%tid.x': (l) => bin('%', lin(l), num(x)),
    '%tid.y': y === 1 ? zero : (l) => bin('%', bin('/', lin(l), num(x)), num(y)),
    '%tid.z': z === 1 ? zero : (x * y) % 32 === 0 ? () => bin('/', v('warp'), num((x * y) / 32)) : (l) => bin('/', lin(l), num(x * y)),
  };
}

function insEnv(facts: Facts, shared: Map<string, SharedSym>, paramSyms: Map<string, number>, params: Map<string, ParamInfo>, f: Func, launch: PtxLaunch, dims: BlockDims, tmemInfo: TmemInfo, flags: ReadonlySet<string>, fields: ReadonlyMap<string, number[]>, constOf: ConstOf): InsEnv {
  const cluster = launch.cluster ?? 1;
  const grid = launch.grid ?? 1;
  const block = dims[0] * dims[1] * dims[2];
  const SPECIAL: Record<string, (l: Lane) => Expr> = {
    ...threadIndex(dims),
    '%ntid.x': () => num(dims[0]), '%ntid.y': () => num(dims[1]), '%ntid.z': () => num(dims[2]),
    '%laneid': (l) => (l === 'lead' ? v('%lead') : num(l)), '%warpid': () => v('warp'), '%nwarpid': () => num(block / 32),
    '%ctaid.x': () => bin('+', bin('*', v('clusterid'), num(cluster)), v('cta')), '%ctaid.y': () => num(0), '%ctaid.z': () => num(0),
    '%nctaid.x': () => num(grid * cluster), '%nctaid.y': () => num(1), '%nctaid.z': () => num(1),
    '%cluster_ctarank': () => v('cta'), '%cluster_nctarank': () => num(cluster), '%clusterid.x': () => v('clusterid'),
    '%clusterid.y': () => num(0), '%clusterid.z': () => num(0), '%nclusterid.x': () => num(grid), '%cluster_ctaid.x': () => v('cta'),
    '%cluster_ctaid.y': () => num(0), '%cluster_ctaid.z': () => num(0), '%cluster_nctaid.x': () => num(cluster), '%is_explicit_cluster': () => num(cluster > 1 ? 1 : 0),
  };
  const symbol = (n: string): number | undefined => shared.get(n)?.base ?? paramSyms.get(n);
  const env: InsEnv = {
    facts,
    pre: [],
    symbol,
    special(name, lane) {
      const p = /^param:(.*)\+(-?\d+)$/.exec(name);
      if (p) {
        const info = params.get(`${p[1]}+${p[2]}`);
        if (info) return { k: 'var', name: info.decl.name };
        const idx = f.params.findIndex((x) => x.name === p[1]);
        if (idx >= 0 && p[2] === '0' && (f.params[idx]!.type === '.u64' || f.params[idx]!.type === '.b64')) return num(PARAM_BASE + idx * 0x1000);
        const short = shortName(p[1]!);
        if (p[2] !== '0' || f.params[idx]?.type === '.b8') {
          // Every field of this parameter the kernel reads and the launch lacks, so that one run names them all.
          const missing = (fields.get(p[1]!) ?? []).filter((o) => !params.has(`${p[1]}+${o}`));
          const all = missing.length > 1 ? ` (the kernel reads ${missing.length} fields of ${short} that have none: bytes ${missing.slice(0, 24).join(', ')}${missing.length > 24 ? ', …' : ''})` : '';
          throw new MissingParam(`the field at byte ${p[2]} of parameter ${short} (index ${idx}) has no value: give --param ${short}+${p[2]}=VALUE${all}`, missing.length > 1 ? missing.map((o) => `${short}+${o}`) : [`${short}+${p[2]}`]);
        }
        // Every scalar parameter the kernel reads and the launch lacks, so that one run names them all.
        const unset = f.params.filter((x) => x.type !== '.b8' && x.type !== '.u64' && x.type !== '.b64' && (fields.get(x.name) ?? []).includes(0) && !params.has(`${x.name}+0`)).map((x) => shortName(x.name));
        const others = unset.length > 1 ? ` (the kernel reads ${unset.length} parameters that have none: ${unset.join(', ')})` : '';
        throw new MissingParam(`parameter ${short} (index ${idx}) has no value: give --param ${short}=VALUE${others}`, unset.length > 1 ? unset : [short]);
      }
      return SPECIAL[name]?.(lane);
    },
    bar: (it, o, lane) => refs.bar(it, o, lane),
    buf: (it, o, lane) => refs.buf(it, o, lane),
    range: (it, o, lane) => refs.range(it, o, lane),
    tensorBytes(it, o) {
      if (o.kind !== 'address' || !o.base) throw new NotModelled('tensor map operand');
      const cands = paramSyms.has(o.base) ? [o.base] : [...facts.prov(it.name(o.base))].filter((s) => paramSyms.has(s));
      if (cands.length !== 1) throw new NotModelled(`the tensor map of this copy is not one kernel parameter`);
      return tensorBox(f.params, cands[0]!, env.paramAt(it, o.base, Number(o.offset))?.offset, launch.tensorMaps ?? {});
    },
    descRoot: (it, reg) => descriptorRoot(facts, it, reg, shared),
    descReads(it, reg) {
      let root: string | undefined;
      try { root = descriptorRoot(facts, it, reg, shared); } catch { root = undefined; }
      const rs = descriptorReads(env, reg, shared, (sym, addr) => refs.bufAt(it, sym, addr), root);
      return rs ?? [{ ref: env.buf(it, { kind: 'address', base: descriptorRoot(facts, it, reg, shared), offset: 0n, pos: it.ins.pos }) }];
    },
    tokenRoot: (it, o) => tokenRoot(facts, it, o),
    staticInt: (it, o) => staticInt(facts, it, o),
    paramAt: (it, base, offset) => paramAddress(facts, it, base, offset, (n) => paramSyms.has(n)),
    isFlag: (it) => flagOf(it, facts, flags) !== undefined,
    gbuf(it, o) {
      const p = flagOf(it, facts, flags);
      const i = f.params.findIndex((x) => x.name === p);
      if (p === undefined || i < 0) throw new NotModelled(`${it.ins.opcode}: the address is not one pointer parameter's`);
      return { name: shortName(p), index: bin('/', bin('-', address(env, it, o, 'lead'), num(PARAM_BASE + i * 0x1000)), num(4)) };
    },
    responseOf(it, o) {
      const d = o.kind === 'name' ? defsOf(facts, it.name(o.name)) : undefined;
      const ld = d && d.length === 1 && d[0]!.ins.base === 'ld' && d[0]!.ins.mods.some((x) => x.startsWith('shared')) ? d[0]! : undefined;
      if (!ld) throw new NotModelled('the response of this query is not one ld.shared of a try_cancel response');
      return env.buf(ld, ld.ins.operands[1]!);
    },
    tmem(it, cols) {
      const n = tmemInfo.sites.length;
      if (n > 1) throw new NotModelled(`the kernel allocates Tensor Memory at ${n} places (lines ${tmemInfo.sites.join(', ')}): which allocation a TMEM address names is not modelled`);
      if (cols && tmemInfo.cols === undefined) throw new NotModelled(`the column count of ${it.ins.opcode} is not a constant`);
    },
    guardMixed: (ss) => refs.checks.guard(ss),
  };
  const refs = sharedRefs(facts, shared, env, constOf);
  return env;
}
