/**
 * Lowering: the CST of a sketch becomes the kernel IR, with every semantic check of the language
 * (names, operand counts and kinds, options, constant ranges, duplicates). Tolerant of partial
 * CST nodes left by syntax-error recovery: what cannot be read is skipped silently (the syntax
 * error was already reported).
 */
import type { CstNode, IToken } from 'chevrotain';
import { EvalFault, parseInteger } from '../kernel/arith.js';
import { evalExpr, foldExpr, showExpr } from '../kernel/expr.js';
import type {
  Arch, BarRef, BarrierDecl, BinOp, BufRef, BufferDecl, Expr, Kernel, MmaShape, Op, ParamDecl, Per, RoleDecl, SrcLoc, Stmt,
} from '../kernel/ir.js';
import { maskRanks } from '../machine/cta-mask.js';
import { MAX_COUNT } from '../model/mbarrier.js';
import { didYouMean, SKETCH_CODES, type SketchCode, type SketchDiagnostic } from './diagnostics.js';
import { LIMITS, StopLowering } from './limits.js';
import { arithHint, literal, tryEval } from './eval.js';
import { BINOPS, BUILTIN_NAMES, type Child, NO_SPAN, type OptVal, PREC, type RawOption, type SExpr, type Span, allTokens, chainOf, children, exprOf, foldS, hasBad, isTok, join, node, nodes, okTok, optValueOf, optionOf, spanOf, tok, tokSpan } from './cst.js';
export type { Span } from './cst.js';
import { findOp, parseQualifiers, MNEMONICS, type OpArgs, type OperandKind, type OpOptionKey } from './ops.js';

// ---- the lowering -----------------------------------------------------------------------------

interface ArrayInfo {
  name: string;
  kind: 'barrier' | 'buffer';
  length?: number;
  /** Bytes per element of a buffer array, with the parameters' defaults. */
  bytes?: number;
  /** The CTA rank a `cta=N` buffer array lives in, with the parameters' defaults. */
  ctaOnly?: number;
  span: Span;
}

/** Where names are looked up: which ones an expression may read, and what the context is called. */
interface Scope {
  /** Names readable here. */
  has(name: string): boolean;
  /** Readable names (for did-you-mean). */
  list(): string[];
  /** e.g. 'the init count of full' */
  what: string;
  /** Hint listing what may appear here. */
  allowed: string;
}

/**
 * Lowers a parsed sketch. Pushes diagnostics; returns the kernel (possibly with errors reported).
 * Throws {@link StopLowering} when a diagnostic would exceed the limit on errors per file.
 */
export function lower(
  cst: CstNode, file: string, diags: SketchDiagnostic[], syntaxErrors: boolean, lineEnd: Map<number, number> = new Map(),
): Kernel | undefined {
  /** Span of a statement or declaration: from its first token to the end of that line. */
  const headOf = (n: CstNode | undefined): Span | undefined => {
    if (!n) return undefined;
    let first: IToken | undefined;
    for (const k in n.children) {
      for (const c of n.children[k]!) {
        if ('image' in c && c.image !== '' && okTok(c) && (!first || c.startOffset < first.startOffset)) first = c;
      }
    }
    if (!first) return spanOf(n, ['block', 'elifClause', 'elseClause']);
    const s = tokSpan(first);
    return { line: s.line, col: s.col, endCol: Math.max(s.endCol, lineEnd.get(s.line) ?? 0) };
  };
  const err = (code: SketchCode, message: string, hint: string, span: Span) => {
    if (diags.length >= LIMITS.errors) throw new StopLowering();
    diags.push({ code, message, hint, file, line: span.line, col: span.col, endCol: Math.max(span.endCol, span.col + 1) });
  };
  const loc = (s: Span): SrcLoc => ({ file, line: s.line, col: s.col, endCol: s.endCol });

  const items = nodes(cst, 'topItem').map((t) => Object.values(t.children)[0]?.[0]).filter((c): c is CstNode => !!c && !isTok(c));
  const kernels = items.filter((n) => n.name === 'kernelDecl');
  const paramNodes = items.filter((n) => n.name === 'paramDecl');
  const barrierNodes = items.filter((n) => n.name === 'barrierDecl');
  const bufferNodes = items.filter((n) => n.name === 'bufferDecl');
  const roleNodes = items.filter((n) => n.name === 'roleDecl');
  const stray = items.filter((n) => n.name === 'stmt');

  const arrays = new Map<string, ArrayInfo>();
  // Declared names share one namespace (parameters, barrier and buffer arrays).
  const declared = new Map<string, Span>();
  const claim = (name: string, span: Span, what: string): boolean => {
    if (BUILTIN_NAMES.includes(name)) {
      err(SKETCH_CODES.duplicate, `'${name}' is a builtin name and cannot be declared`, `builtins: ${BUILTIN_NAMES.join(', ')}; choose another name`, span);
      return false;
    }
    const prev = declared.get(name);
    if (prev) {
      err(SKETCH_CODES.duplicate, `'${name}' is already declared (line ${prev.line})`, `rename this ${what} or remove one of the declarations`, span);
      return false;
    }
    declared.set(name, span);
    return true;
  };

  // ---- parameters
  const params: ParamDecl[] = [];
  const paramValues: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const n of paramNodes) {
    const id = tok(n, 'Ident');
    if (!id) continue;
    const span = headOf(n) ?? tokSpan(id);
    if (!claim(id.image, tokSpan(id), 'parameter')) continue;
    const se = exprOf(node(n, 'expr'));
    if (hasBad(se)) continue;
    const e = plainExpr(se);
    const r = e ? tryEval(e, () => undefined) : undefined;
    if (r && 'fault' in r) {
      err(SKETCH_CODES.arith, `the default of parameter ${id.image}: ${r.fault}`, arithHint(r.fault), se.span);
      continue;
    }
    const v = r?.v;
    if (v === undefined || !Number.isInteger(v)) {
      err(SKETCH_CODES.paramValue, `the default of parameter ${id.image} must be an integer`, 'write an integer literal such as 4, 0x1000 or 16_384 (override it with --set NAME=VALUE)', se.span);
      continue;
    }
    params.push({ name: id.image, value: v, loc: loc(span) });
    paramValues[id.image] = v;
  }
  const paramNames = new Set(params.map((p) => p.name));
  const staticScope = (what: string, extra: string[] = []): Scope => ({
    has: (n) => paramNames.has(n) || extra.includes(n),
    list: () => [...paramNames, ...extra],
    what,
    allowed: `only parameters${extra.length ? ` and ${extra.join(', ')}` : ''} may appear here`,
  });
  /** The value with the parameters' defaults; a fault is reported at `span` (when given) as E-arith. */
  const evalDefault = (e: Expr | undefined, extra: Record<string, number> = {}, span?: Span): number | undefined => {
    if (!e) return undefined;
    const r = tryEval(e, (n) => (Object.hasOwn(extra, n) ? extra[n] : Object.hasOwn(paramValues, n) ? paramValues[n] : undefined));
    if (r && 'fault' in r) {
      if (span) err(SKETCH_CODES.arith, r.fault, arithHint(r.fault), span);
      return undefined;
    }
    return r?.v;
  };

  // ---- kernel line
  let name = 'sketch';
  let arch: Arch = 'sm_100a';
  let archKnown = true;
  let cluster: Expr = { k: 'num', v: 1 };
  let grid: Expr | undefined;
  let resident: Expr | undefined;
  let description: string | undefined;
  let kernelSpan: Span = NO_SPAN;
  if (kernels.length === 0 && !syntaxErrors) {
    err(SKETCH_CODES.missingKernel, 'the sketch has no kernel declaration', "start the file with a line such as 'kernel NAME arch=sm_100a cluster=1'", NO_SPAN);
  }
  kernels.forEach((n, i) => {
    const id = tok(n, 'Ident');
    const span = headOf(n) ?? NO_SPAN;
    if (i > 0) {
      err(SKETCH_CODES.duplicate, `a second kernel declaration (the first is on line ${kernelSpan.line})`, 'a sketch file describes one kernel', span);
      return;
    }
    kernelSpan = span;
    if (id) name = id.image;
    const quoted = tok(n, 'name');
    if (quoted) {
      try {
        name = JSON.parse(quoted.image) as string;
      } catch {
        name = quoted.image.slice(1, -1);
      }
    }
    const opts = readOptions(nodes(n, 'declOption'), 'the kernel', ['arch', 'cluster', 'grid', 'resident', 'description']);
    const a = opts.get('arch');
    if (a) {
      const v = a.value?.kind === 'expr' && a.value.e.k === 'name' && !a.value.e.index ? a.value.e.name : undefined;
      if (v === 'sm_90a' || v === 'sm_100a') arch = v;
      else {
        archKnown = false;
        err(SKETCH_CODES.optionValue, 'arch must be sm_90a (Hopper) or sm_100a (Blackwell)', 'write arch=sm_90a or arch=sm_100a', a.value?.span ?? a.span);
      }
    }
    const c = opts.get('cluster');
    if (c) {
      const e = exprOption(c, staticScope('the cluster size'));
      if (e) {
        cluster = e;
        const v = evalDefault(e, {}, c.value!.span);
        if (v !== undefined && (v < 1 || v > 16)) err(SKETCH_CODES.optionValue, `cluster size ${v} is outside 1..16`, 'a cluster has 1 to 16 CTAs (portable maximum 8)', c.value!.span);
      }
    }
    const g = opts.get('grid');
    if (g) grid = exprOption(g, staticScope('the grid size')) ?? grid;
    const rs = opts.get('resident'); // `resident=all`: every cluster (the default)
    if (rs && !(rs.value?.kind === 'expr' && rs.value.e.k === 'name' && rs.value.e.name === 'all' && !rs.value.e.index)) resident = exprOption(rs, staticScope('the resident clusters'));
    const d = opts.get('description');
    if (d) {
      if (d.value?.kind === 'string') description = d.value.text;
      else err(SKETCH_CODES.optionValue, 'description must be a string', 'write description="what the kernel does"', d.value?.span ?? d.span);
    }
  });
  const clusterDefault = evalDefault(cluster);
  const sizeScope = (what: string) => staticScope(what, ['ncta']);
  const sizeEnv: Record<string, number> = clusterDefault !== undefined ? { ncta: clusterDefault } : {};

  // ---- barrier and buffer arrays
  const barriers: BarrierDecl[] = [];
  for (const n of barrierNodes) {
    const id = tok(n, 'Ident');
    if (!id) continue;
    const span = headOf(n) ?? tokSpan(id);
    const ok = claim(id.image, tokSpan(id), 'barrier array');
    const length = lengthOf(n, `the length of barrier array ${id.image}`);
    const opts = readOptions(nodes(n, 'declOption'), `barrier ${id.image}`, ['count', 'manual', 'cta']);
    const c = opts.get('count');
    let count: Expr | undefined;
    if (!c) err(SKETCH_CODES.missingOption, `barrier ${id.image} needs an init count`, `write count=N: the arrivals each phase expects, 1 to ${MAX_COUNT}`, span);
    else {
      count = exprOption(c, sizeScope(`the init count of ${id.image}`));
      const v = evalDefault(count, sizeEnv, c.value?.span);
      if (count && v !== undefined && (v < 1 || v > MAX_COUNT)) {
        err(SKETCH_CODES.initCount, `init count ${v} of barrier ${id.image} is outside [1, ${MAX_COUNT}]`, 'an mbarrier expects 1 to 2^20 - 1 arrivals per phase', c.value!.span);
        count = undefined;
      }
    }
    const m = opts.get('manual');
    if (m?.value) err(SKETCH_CODES.optionValue, "'manual' takes no value", "write just 'manual' to initialize the barriers with mbarrier.init in a role", m.value.span);
    const ct = opts.get('cta');
    const cta = ct ? exprOption(ct, staticScope(`the CTA of ${id.image}`)) : undefined;
    if (ok) arrays.set(id.image, { name: id.image, kind: 'barrier', length: evalDefault(length, sizeEnv), span: tokSpan(id) });
    if (!ok || !length || !count || (ct && !cta)) continue;
    const d: BarrierDecl = { name: id.image, length, count, init: m ? 'manual' : 'auto', loc: loc(span) };
    if (cta) d.cta = cta;
    if (!node(n, 'arrayLen')) d.scalar = true;
    barriers.push(d);
  }
  const buffers: BufferDecl[] = [];
  const aliasOpts: { d: BufferDecl; o: RawOption }[] = [];
  for (const n of bufferNodes) {
    const id = tok(n, 'Ident');
    if (!id) continue;
    const space = tok(n, 'KwTmem') ? 'tmem' : tok(n, 'KwGmem') ? 'gmem' : 'smem';
    const span = headOf(n) ?? tokSpan(id);
    const ok = claim(id.image, tokSpan(id), 'buffer array');
    const length = lengthOf(n, `the length of buffer array ${id.image}`);
    const opts = readOptions(nodes(n, 'declOption'), `${space} ${id.image}`, space === 'tmem' ? ['bytes', 'cols', 'alias', 'cta'] : space === 'gmem' ? ['bytes', 'init'] : ['bytes', 'alias', 'cta']);
    const b = opts.get('bytes');
    const c = opts.get('cols');
    const cols = c ? exprOption(c, sizeScope(`the columns of ${id.image}`)) : undefined;
    let bytes: Expr | undefined = space === 'gmem' ? { k: 'num', v: 4 } : undefined; // a global location: one 32-bit word
    const ini = opts.get('init');
    if (!b && !bytes) err(SKETCH_CODES.missingOption, `${space} ${id.image} needs a size`, 'write bytes=N: the size in bytes of each element of the array', span);
    else if (b) bytes = exprOption(b, sizeScope(`the size of ${id.image}`));
    const ct = opts.get('cta');
    const cta = ct ? exprOption(ct, staticScope(`the CTA of ${id.image}`)) : undefined;
    const al = opts.get('alias');
    if (ok) arrays.set(id.image, { name: id.image, kind: 'buffer', length: evalDefault(length, sizeEnv), bytes: evalDefault(bytes, sizeEnv), ctaOnly: evalDefault(cta, sizeEnv), span: tokSpan(id) });
    if (!ok || !length || !bytes || (ct && !cta)) continue;
    const d: BufferDecl = { name: id.image, space, length, bytes, ...(cols ? { cols } : {}), loc: loc(span), ...(node(n, 'arrayLen') ? {} : { scalar: true }) };
    if (cta) d.cta = cta;
    if (ini && !(d.init = exprOption(ini, staticScope(`the init value of ${id.image}`)))) delete d.init;
    if (al) aliasOpts.push({ d, o: al });
    buffers.push(d);
  }
  for (const { d, o } of aliasOpts) {
    const alias = aliasOf(d, o);
    if (alias) d.alias = alias;
    else buffers.splice(buffers.indexOf(d), 1);
  }

  // ---- statements outside roles
  const firstSyntax = diags.length ? Math.min(...diags.map((d) => d.line)) : Infinity;
  for (const n of stray) {
    const span = headOf(Object.values(n.children)[0]?.[0] as CstNode) ?? NO_SPAN;
    if (span.line >= firstSyntax) continue;
    err(SKETCH_CODES.syntax, 'statements belong inside a role', "indent it under a line such as 'role producer warps=1 per=one:'", span);
    break;
  }

  // ---- roles
  const roles: RoleDecl[] = [];
  const roleNames = new Map<string, Span>();
  for (const n of roleNodes) {
    const id = tok(n, 'Ident');
    if (!id) continue;
    const head = headOf(n) ?? tokSpan(id);
    let ok = true;
    const prev = roleNames.get(id.image);
    if (prev) {
      err(SKETCH_CODES.duplicate, `role '${id.image}' is already declared (line ${prev.line})`, 'give each role its own name (use instances=N for several copies)', tokSpan(id));
      ok = false;
    } else roleNames.set(id.image, tokSpan(id));
    const opts = readOptions(nodes(n, 'declOption'), `role ${id.image}`, ['warps', 'warpgroups', 'threads', 'per', 'instances', 'where', 'cta']);
    const intLit = (o: RawOption | undefined, what: string): number | undefined => {
      if (!o) return undefined;
      const e = o.value?.kind === 'expr' && !hasBad(o.value.e) ? plainExpr(o.value.e) : undefined;
      const v = e ? literal(e) : undefined;
      if (v === undefined || !Number.isInteger(v) || v < 1) {
        err(SKETCH_CODES.optionValue, `${what} must be a positive integer literal`, `write ${o.key}=N with a number (roles have a fixed size)`, o.value?.span ?? o.span);
        ok = false;
        return undefined;
      }
      return v;
    };
    let warps = intLit(opts.get('warps'), 'warps') ?? 1;
    const wg = opts.get('warpgroups');
    if (wg) {
      if (opts.get('warps')) {
        err(SKETCH_CODES.optionValue, 'give either warps or warpgroups, not both', 'a warpgroup is 4 warps', wg.span);
        ok = false;
      }
      const v = intLit(wg, 'warpgroups');
      if (v) warps = v * 4;
    }
    const threads = intLit(opts.get('threads'), 'threads');
    if (threads !== undefined) {
      if (!opts.get('warps') && !wg) warps = Math.max(1, Math.ceil(threads / 32)); // threads alone: the warps they fill
      else if (threads > warps * 32) {
        const t = opts.get('threads')!;
        err(SKETCH_CODES.optionValue, `threads=${threads} do not fit in ${warps} warp${warps === 1 ? '' : 's'} (at most ${warps * 32} threads)`, `give warps=${Math.ceil(threads / 32)}, or leave warps out: threads alone sets the warps they fill`, t.value?.span ?? t.span);
        ok = false;
      }
    }
    let per: Per = 'thread';
    const p = opts.get('per');
    if (p) {
      const v = perOf(p);
      if (v) per = v;
      else ok = false;
    }
    const inst = opts.get('instances');
    const instances = inst ? exprOption(inst, staticScope(`the instances of role ${id.image}`)) : undefined;
    if (inst && !instances) ok = false;
    if (inst && instances) {
      const v = evalDefault(instances, {}, inst.value!.span);
      if (v !== undefined && v < 0) {
        err(SKETCH_CODES.optionValue, `role ${id.image} has instances=${v}; the number of instances cannot be negative`, 'give instances=N with N ≥ 0 (0: the role does not run)', inst.value!.span);
        ok = false;
      }
    }
    const wh = opts.get('where');
    let where = wh ? exprOption(wh, staticScope(`the where-condition of role ${id.image}`, ['cta', 'ncta', 'clusterid'])) : undefined;
    if (wh && !where) ok = false;
    const ct = opts.get('cta');
    if (ct) {
      if (wh) {
        err(SKETCH_CODES.optionValue, 'give either cta= or where=, not both', 'cta=N is short for where=cta == N', ct.span);
        ok = false;
      }
      const e = exprOption(ct, staticScope(`the CTA of role ${id.image}`));
      if (e) where = { k: 'bin', op: '==', a: { k: 'var', name: 'cta' }, b: e };
      else ok = false;
    }
    // The CTA ranks the role runs in (with the defaults), for references to one-CTA buffers.
    const ranks = clusterDefault === undefined ? undefined
      : Array.from({ length: clusterDefault }, (_, r) => r).filter((r) => !where || evalDefault(where, { cta: r, ncta: clusterDefault, clusterid: 0 }) !== 0);
    const body = lowerRole(node(n, 'block'), id.image, ranks);
    if (!ok || !body) continue;
    const r: RoleDecl = { name: id.image, warps, per, body, loc: loc(head) };
    if (threads !== undefined) r.threads = threads;
    if (instances) {
      r.instances = instances;
      r.instancesLoc = loc(inst!.value!.span);
    }
    if (where) r.where = where;
    roles.push(r);
  }

  const k: Kernel = { name, arch, params, cluster, barriers, buffers, roles, file };
  if (grid) k.grid = grid;
  if (resident) k.resident = resident;
  if (description !== undefined) k.description = description;
  if (kernelSpan !== NO_SPAN) k.loc = { file, line: kernelSpan.line, col: kernelSpan.col, endCol: kernelSpan.endCol };
  return k;

  // ---- helpers (closures over the diagnostics and declarations) ----------------------------

  function readOptions(list: CstNode[], owner: string, allowed: string[]): Map<string, RawOption> {
    const out = new Map<string, RawOption>();
    for (const n of list) {
      const o = optionOf(n);
      if (!o) continue;
      if (!allowed.includes(o.key)) {
        const dm = didYouMean(o.key, allowed);
        err(SKETCH_CODES.unknownOption, `unknown option '${o.key}' for ${owner}`, dm ? `did you mean '${dm}'? (${owner} accepts: ${allowed.join(', ')})` : `${owner} accepts: ${allowed.join(', ')}`, o.keySpan);
        continue;
      }
      if (out.has(o.key)) {
        err(SKETCH_CODES.duplicate, `option '${o.key}' is given twice`, 'give each option once', o.keySpan);
        continue;
      }
      out.set(o.key, o);
    }
    return out;
  }

  function perOf(o: RawOption): Per | undefined {
    const v = o.value?.kind === 'expr' && o.value.e.k === 'name' && !o.value.e.index ? o.value.e.name : undefined;
    if (v === 'thread' || v === 'warp' || v === 'one') return v;
    err(SKETCH_CODES.optionValue, 'per must be thread, warp or one', 'per=thread: every thread performs it; per=warp: one thread per warp; per=one: one elected thread', o.value?.span ?? o.span);
    return undefined;
  }

  /** The target of `alias=A` / `alias=A[E]` on buffer declaration `d`: a buffer array of the same space, E a constant. */
  function aliasOf(d: BufferDecl, o: RawOption): BufferDecl['alias'] | undefined {
    const v = o.value?.kind === 'expr' ? o.value.e : undefined;
    if (!v || v.k !== 'name') {
      err(SKETCH_CODES.alias, `alias= of ${d.name} must name a buffer array`, `write alias=A or alias=A[i]: ${d.name} then views A's bytes from element i`, o.value?.span ?? o.span);
      return undefined;
    }
    const arr = arrays.get(v.name);
    if (!arr || arr.kind !== 'buffer' || v.name === d.name) {
      const dm = didYouMean(v.name, [...arrays.values()].filter((a) => a.kind === 'buffer' && a.name !== d.name).map((a) => a.name));
      err(SKETCH_CODES.alias, v.name === d.name ? `${d.name} cannot be an alias of itself` : `alias=${v.name}: '${v.name}' is not a buffer array`, dm ? `did you mean '${dm}'?` : 'declare the array the alias views: smem A[N] bytes=B', v.span);
      return undefined;
    }
    const index = v.index ? intExpr(v.index, sizeScope(`the element ${d.name} starts at`)) : { k: 'num' as const, v: 0 };
    if (!index) return undefined;
    const at = evalDefault(index, sizeEnv);
    if (at !== undefined && arr.length !== undefined && (at < 0 || at >= arr.length)) {
      err(SKETCH_CODES.indexRange, `index ${at} is out of range for buffer array ${arr.name}[${arr.length}]`, `valid indices are 0 to ${arr.length - 1}`, v.index?.span ?? v.span);
      return undefined;
    }
    const mine = arrays.get(d.name);
    if (at !== undefined && mine?.length !== undefined && mine.bytes !== undefined && arr.length !== undefined && arr.bytes !== undefined) {
      const end = at * arr.bytes + mine.length * mine.bytes;
      if (end > arr.length * arr.bytes) {
        err(SKETCH_CODES.alias, `${d.name} (${mine.length} × ${mine.bytes} bytes from ${arr.name}[${at}]) ends at byte ${end}, past the ${arr.length * arr.bytes} bytes of ${arr.name}`, 'an alias views storage that exists: make it smaller or start it earlier', o.value!.span);
        return undefined;
      }
    }
    return { name: v.name, index };
  }

  function exprOption(o: RawOption, scope: Scope): Expr | undefined {
    if (!o.value || o.value.kind !== 'expr') {
      err(SKETCH_CODES.optionValue, `option '${o.key}' needs an integer expression`, `write ${o.key}=EXPR`, o.value?.span ?? o.span);
      return undefined;
    }
    return intExpr(o.value.e, scope);
  }

  function lengthOf(n: CstNode, what: string): Expr | undefined {
    const len = node(n, 'arrayLen');
    if (!len) return { k: 'num', v: 1 };
    const se = exprOf(node(len, 'expr'));
    const e = intExpr(se, sizeScope(what));
    const v = evalDefault(e, sizeEnv, se.span);
    if (e && v !== undefined && v < 1) {
      err(SKETCH_CODES.optionValue, `${what} is ${v}; it needs at least 1`, 'arrays have at least one element', se.span);
      return undefined;
    }
    return e;
  }

  /** Converts an expression that must be an integer (no references) over `scope`. */
  function intExpr(e: SExpr, scope: Scope): Expr | undefined {
    let ok = !hasBad(e);
    const walk = (x: SExpr, kids: (Expr | undefined)[]): Expr | undefined => {
      switch (x.k) {
        case 'bad': return undefined;
        case 'num': return { k: 'num', v: x.v };
        case 'un': {
          const a = kids[0];
          return a ? { k: 'un', op: x.op, a } : undefined;
        }
        case 'bin': {
          const [a, b] = kids;
          return a && b ? { k: 'bin', op: x.op, a, b } : undefined;
        }
        case 'name': {
          const arr = arrays.get(x.name);
          if (arr || x.index) {
            err(SKETCH_CODES.operandKind,
              arr ? `'${x.name}' is a ${arr.kind} array, not an integer` : `'${x.name}' is not an array and cannot be indexed`,
              arr ? `an integer is expected here; ${x.name}[i] can only be an operand of an operation that takes a ${arr.kind}` : 'only barrier and buffer arrays take [index]',
              x.span);
            ok = false;
            return undefined;
          }
          if (!scope.has(x.name)) {
            const known = BUILTIN_NAMES.includes(x.name) || paramNames.has(x.name);
            const dm = known ? undefined : didYouMean(x.name, scope.list());
            err(SKETCH_CODES.unknownName,
              known ? `'${x.name}' cannot be used in ${scope.what}` : `unknown name '${x.name}'`,
              dm ? `did you mean '${dm}'?` : scope.allowed,
              x.span);
            ok = false;
            return undefined;
          }
          return { k: 'var', name: x.name, loc: loc(x.span) };
        }
      }
    };
    const out = foldS(e, false, walk);
    return ok ? out : undefined;
  }

  /** An expression without names (literals only), for parameter defaults and role sizes. */
  function plainExpr(e: SExpr): Expr | undefined {
    return foldS<Expr | undefined>(e, false, (x, [a, b]) => {
      switch (x.k) {
        case 'num': return { k: 'num', v: x.v };
        case 'un': return a ? { k: 'un', op: x.op, a } : undefined;
        case 'bin': return a && b ? { k: 'bin', op: x.op, a, b } : undefined;
        default: return undefined;
      }
    });
  }

  function lowerRole(block: CstNode | undefined, roleName: string, ranks?: number[]): Stmt[] | undefined {
    const vars = new Set<string>();
    const scope: Scope = {
      has: (n) => vars.has(n) || paramNames.has(n) || BUILTIN_NAMES.includes(n),
      list: () => [...vars, ...paramNames, ...BUILTIN_NAMES],
      what: `role ${roleName}`,
      allowed: `role ${roleName} can read parameters, builtins (${BUILTIN_NAMES.join(', ')}) and variables assigned before this line`,
    };
    let ok = true;
    const assignable = (name: string, span: Span): boolean => {
      if (paramNames.has(name) || BUILTIN_NAMES.includes(name) || arrays.has(name)) {
        const what = paramNames.has(name) ? 'a parameter' : arrays.has(name) ? `a ${arrays.get(name)!.kind} array` : 'a builtin';
        err(SKETCH_CODES.assign, `'${name}' is ${what} and cannot be assigned`, 'use another variable name', span);
        return false;
      }
      return true;
    };
    const ie = (e: SExpr): Expr | undefined => {
      const x = intExpr(e, scope);
      if (!x) ok = false;
      return x;
    };

    /** Depth of enclosing `elect:` blocks (their bodies run on one thread). */
    let electDepth = 0;
    const block_ = (b: CstNode | undefined): Stmt[] => {
      const out: Stmt[] = [];
      for (const st of nodes(b, 'stmt')) {
        const inner = Object.values(st.children)[0]?.[0];
        if (!inner || isTok(inner)) continue;
        const r = stmt(inner);
        if (r) out.push(...r);
      }
      return out;
    };

    const stmt = (n: CstNode): Stmt[] | undefined => {
      const head = headOf(n) ?? NO_SPAN;
      const l = loc(head);
      switch (n.name) {
        case 'passStmt': return [];
        case 'forStmt': {
          const v = tok(n, 'Ident');
          const ex = nodes(n, 'expr').map(exprOf);
          if (n.recoveredNode || !v || ex.length === 0) {
            if (v) vars.add(v.image);
            block_(node(n, 'block'));
            ok = false;
            return undefined;
          }
          const [a, b, c] = ex.length === 1 ? [undefined, ex[0]!, undefined] : [ex[0], ex[1]!, ex[2]];
          const from = a ? ie(a) : { k: 'num' as const, v: 0 };
          const to = ie(b);
          const step = c ? ie(c) : undefined;
          if (assignable(v.image, tokSpan(v))) vars.add(v.image);
          else ok = false;
          const body = block_(node(n, 'block'));
          if (!from || !to || (c && !step)) return undefined;
          const s: Stmt = { s: 'for', var: v.image, from, to, body, loc: l };
          if (step) s.step = step;
          return [s];
        }
        case 'chooseStmt': {
          // `choose v in range(A, B)`: every value A .. B - 1 (range(B): 0 .. B - 1), IR bounds inclusive.
          const v = tok(n, 'Ident');
          const ex = nodes(n, 'expr').map(exprOf).map(ie);
          if (v && assignable(v.image, tokSpan(v))) vars.add(v.image);
          else ok = false;
          if (n.recoveredNode || !v || !ex.length || ex.some((e) => !e)) return undefined;
          const [lo, hi] = ex.length === 1 ? [{ k: 'num' as const, v: 0 }, ex[0]!] : [ex[0]!, ex[1]!];
          return [{ s: 'op', op: { op: 'choose', dest: v.image, lo, hi: hi.k === 'num' ? { k: 'num', v: hi.v - 1 } : { k: 'bin', op: '-', a: hi, b: { k: 'num', v: 1 } } }, loc: l }];
        }
        case 'ifStmt':
        case 'elifClause': {
          const cond = n.recoveredNode ? undefined : ie(exprOf(node(n, 'expr')));
          const then = block_(node(n, 'block'));
          let otherwise: Stmt[] | undefined;
          const elifs = nodes(n, 'elifClause');
          const els = node(n, 'elseClause');
          if (elifs.length) {
            // elif chains nest: if a: .. elif b: .. else: ..  ==  if a: .. else: (if b: .. else: ..)
            const [first, ...more] = elifs;
            const synthetic: CstNode = { name: 'elifClause', children: { ...first!.children, elifClause: more, ...(els ? { elseClause: [els] } : {}) } };
            otherwise = stmt(synthetic);
          } else if (els) otherwise = block_(node(els, 'block'));
          if (!cond) {
            ok = false;
            return undefined;
          }
          const s: Stmt = { s: 'if', cond, then, loc: l };
          if (otherwise) s.else = otherwise;
          return [s];
        }
        case 'electStmt': {
          electDepth++;
          const body = block_(node(n, 'block'));
          electDepth--;
          return [{ s: 'elect', body, loc: l }];
        }
        case 'simpleStmt': {
          const dest = tok(n, 'dest');
          if (n.recoveredNode) {
            if (dest) vars.add(dest.image);
            ok = false;
            return undefined;
          }
          if (dest) {
            const av = node(n, 'assignValue');
            const mn = tok(av, 'Mnemonic');
            if (!av || av.recoveredNode) {
              vars.add(dest.image);
              ok = false;
              return undefined;
            }
            if (mn) return opStmt(mn, node(av, 'opArgs'), dest, head);
            const value = ie(exprOf(node(av, 'expr')));
            if (!assignable(dest.image, tokSpan(dest))) ok = false;
            else vars.add(dest.image);
            return value ? [{ s: 'let', name: dest.image, value, loc: l }] : undefined;
          }
          const mn = tok(n, 'Mnemonic') ?? tok(n, 'Ident');
          if (!mn) return undefined;
          return opStmt(mn, node(n, 'opArgs'), undefined, head);
        }
        default:
          return undefined;
      }
    };

    const opStmt = (mn: IToken, argsNode: CstNode | undefined, dest: IToken | undefined, head: Span): Stmt[] | undefined => {
      const fail = () => {
        if (dest) vars.add(dest.image);
        ok = false;
        return undefined;
      };
      const spec = findOp(mn.image);
      const mnSpan = tokSpan(mn);
      if (!spec) {
        const dm = didYouMean(mn.image, MNEMONICS);
        err(SKETCH_CODES.unknownMnemonic, `unknown operation '${mn.image}'`, dm ? `did you mean '${dm}'?` : 'operations are written with their PTX mnemonics; docs/LANGUAGE.md lists them', mnSpan);
        return fail();
      }
      if (argsNode?.recoveredNode) return fail();
      const quals = parseQualifiers(mn.image);
      if (quals?.invalid) {
        err(SKETCH_CODES.unknownMnemonic, `${mn.image} is not a valid spelling of ${spec.name}`, quals.invalid, mnSpan);
        return fail();
      }
      let bad = false;
      if (spec.arch && archKnown && spec.arch !== arch) {
        err(SKETCH_CODES.arch, `${spec.name} needs ${spec.arch} but the kernel targets ${arch}`,
          spec.arch === 'sm_100a' ? 'tcgen05 instructions exist on Blackwell: set arch=sm_100a on the kernel line (Hopper uses wgmma)' : 'wgmma exists on Hopper only: set arch=sm_90a on the kernel line (Blackwell uses tcgen05)',
          mnSpan);
        bad = true;
      }
      // Positional operands and options, in source order.
      const operands: CstNode[] = [];
      const options: RawOption[] = [];
      const collect = (a: CstNode) => {
        const o = node(a, 'opOption');
        if (o) {
          const r = optionOf(o);
          if (r) options.push(r);
          else bad = true;
        }
        const p = node(a, 'operand');
        if (p) operands.push(p);
      };
      const argNodes = [...nodes(argsNode, 'opArg'), ...nodes(argsNode, 'opOption').map((o): CstNode => ({ name: 'opArg', children: { opOption: [o] } }))];
      argNodes.forEach(collect);

      if (dest && !spec.dest) {
        err(SKETCH_CODES.assign, `${spec.name} has no result to assign`, `write it without '${dest.image} =': ${spec.name} ${spec.usage}`.trimEnd(), tokSpan(dest));
        bad = true;
      }
      if (!dest && spec.dest === 'required') {
        err(SKETCH_CODES.assign, `the result of ${spec.name} must be assigned to a variable`, `write: n = ${spec.name} ${spec.usage}`, mnSpan);
        bad = true;
      }
      const min = spec.args.length - (spec.optional ?? 0);
      const max = spec.variadic ? Infinity : spec.args.length;
      if (operands.length < min || operands.length > max) {
        const expect = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
        const span = operands.length > max ? spanOf(operands[max]) ?? mnSpan : head;
        err(SKETCH_CODES.operandCount,
          `${spec.name} takes ${expect} operand${expect === '1' ? '' : 's'} but ${operands.length} ${operands.length === 1 ? 'was' : 'were'} given`,
          spec.usage ? `write: ${spec.name} ${spec.usage}` : `${spec.name} takes no operands`,
          span);
        return fail();
      }
      const args: OpArgs = { v: [], rest: [] };
      if (quals?.sem) args.sem = quals.sem;
      if (quals?.scope) args.scope = quals.scope;
      operands.forEach((o, i) => {
        const kind: OperandKind = i < spec.args.length ? spec.args[i]! : 'buf';
        const v = operand(o, kind, spec.name);
        if (v === undefined) bad = true;
        else if (i < spec.args.length) args.v[i] = v;
        else args.rest.push(v as BufRef);
      });
      const seen = new Set<string>();
      for (const o of options) {
        const allowed = spec.options ?? [];
        if (!allowed.includes(o.key as OpOptionKey)) {
          const dm = didYouMean(o.key, allowed);
          err(SKETCH_CODES.unknownOption, `unknown option '${o.key}' for ${spec.name}`,
            dm ? `did you mean '${dm}'?` : allowed.length ? `${spec.name} accepts: ${allowed.join(', ')}` : `${spec.name} takes no options`, o.keySpan);
          bad = true;
          continue;
        }
        if (seen.has(o.key)) {
          err(SKETCH_CODES.duplicate, `option '${o.key}' is given twice`, 'give each option once', o.keySpan);
          bad = true;
          continue;
        }
        seen.add(o.key);
        if (o.key === 'per') {
          const p = perOf(o);
          if (p && p !== 'one' && electDepth > 0) {
            err(SKETCH_CODES.optionValue, `per=${p} inside elect: only the elected thread runs this block, so ${spec.name} here is one thread's`,
              p === 'thread' ? 'move it out of the elect: block for every thread of each warp to perform it, or drop per=' : 'move it out of the elect: block for one thread of each warp to perform it, or drop per=', o.value?.span ?? o.span);
            bad = true;
          } else if (p) args.per = p;
          else bad = true;
        } else if (o.key === 'shape') {
          if (o.value?.kind === 'shape' && o.value.shape.m > 0 && o.value.shape.n > 0 && o.value.shape.k > 0) args.shape = o.value.shape;
          else {
            err(SKETCH_CODES.optionValue, 'shape must be written MxNxK', 'for example shape=128x128x64 (elements)', o.value?.span ?? o.span);
            bad = true;
          }
        } else {
          const e = exprOption(o, scope);
          if (e) args[o.key as 'multicast' | 'chunks' | 'value'] = e;
          else bad = true;
          // A mask known from the defaults that selects no CTA of the cluster (cta-mask.ts).
          const mv = e && o.key === 'multicast' && clusterDefault !== undefined ? evalDefault(e, sizeEnv) : undefined;
          const sel = mv !== undefined ? maskRanks(mv, clusterDefault!) : undefined;
          if (sel && !Array.isArray(sel)) {
            err(SKETCH_CODES.optionValue, `${sel.problem}: ${spec.name} would deliver to no CTA`, `set the bits of the destination CTA ranks (0..${clusterDefault! - 1}): multicast=${(1 << clusterDefault!) - 1} is every CTA of the cluster`, o.value?.span ?? o.span);
            bad = true;
          }
        }
      }
      for (const r of spec.required ?? []) {
        if (!seen.has(r)) {
          err(SKETCH_CODES.missingOption, `${spec.name} needs the option ${r}=`, `write: ${spec.name} ${spec.usage}`, head);
          bad = true;
        }
      }
      if (spec.name === 'mbarrier.init' && args.v[1]) {
        const v = evalDefault(args.v[1] as Expr, sizeEnv, spanOf(operands[1]) ?? head);
        if (v !== undefined && (v < 1 || v > MAX_COUNT)) {
          err(SKETCH_CODES.initCount, `init count ${v} is outside [1, ${MAX_COUNT}]`, 'an mbarrier expects 1 to 2^20 - 1 arrivals per phase', spanOf(operands[1]) ?? head);
          bad = true;
        }
      }
      if (spec.name === 'work' && args.v[0]) {
        const v = evalDefault(args.v[0] as Expr, sizeEnv);
        if (v !== undefined && v < 0) {
          err(SKETCH_CODES.workCycles, `work of ${v} cycles is negative`, 'work takes a non-negative number of cycles', spanOf(operands[0]) ?? head);
          bad = true;
        }
      }
      // `_ = mbarrier.arrive …`: PTX's sink for the state result (no token kept).
      const sink = dest?.image === '_' && spec.dest === 'token';
      if (dest && spec.dest && !sink) {
        if (assignable(dest.image, tokSpan(dest))) vars.add(dest.image);
        else bad = true;
        args.dest = dest.image;
      }
      if (bad) return fail();
      const built = spec.build(args);
      if (quals?.fields) Object.assign(built, quals.fields);
      if (!checkRange(built)) return fail();
      return [{ s: 'op', op: built, loc: loc(head) }];
    };

    const operand = (o: CstNode, kind: OperandKind, opName: string): BarRef | BufRef | Expr | string | undefined => {
      let e = exprOf(node(o, 'expr'));
      if (hasBad(e)) return undefined;
      const at = node(o, 'unaryExpr');
      const ctaE = at ? exprOf(at) : undefined;
      if (ctaE && hasBad(ctaE)) return undefined;
      const span = ctaE ? join(e.span, ctaE.span) : e.span;
      if (kind === 'int') {
        if (ctaE) {
          err(SKETCH_CODES.operandKind, 'only barrier and buffer references take @CTA', `this operand of ${opName} is an integer`, span);
          return undefined;
        }
        return intExpr(e, scope);
      }
      if (kind === 'var') {
        if (e.k !== 'name' || e.index || ctaE) {
          err(SKETCH_CODES.operandKind, `${opName} expects a token variable here`, `write the variable an arrive assigned: tok = mbarrier.arrive BAR, then ${opName} ... tok`, span);
          return undefined;
        }
        if (!vars.has(e.name)) {
          const dm = didYouMean(e.name, [...vars]);
          err(SKETCH_CODES.unknownName, `unknown token variable '${e.name}'`, dm ? `did you mean '${dm}'?` : 'assign it first: tok = mbarrier.arrive BAR', e.span);
          return undefined;
        }
        return e.name;
      }
      const want = kind === 'bar' ? 'barrier' : 'buffer';
      // A byte offset into a buffer: BUF + OFF (a chain of + whose leftmost term is the reference).
      const offs: SExpr[] = [];
      const whole = e;
      if (kind === 'buf') while (e.k === 'bin' && e.op === '+') { offs.unshift(e.b); e = e.a; }
      if (offs.length && e.k !== 'name') e = whole;
      if (e.k !== 'name') {
        err(SKETCH_CODES.operandKind, `${opName} expects a ${want} reference here`, `write a ${want} array element such as ${kind === 'bar' ? 'full[s]' : 'tile[s]'}`, span);
        return undefined;
      }
      const arr = arrays.get(e.name);
      if (!arr) {
        const known = scope.has(e.name);
        const dm = didYouMean(e.name, [...arrays.values()].filter((a) => a.kind === want).map((a) => a.name));
        if (known) {
          err(SKETCH_CODES.operandKind, `${opName} expects a ${want} reference but '${e.name}' is an integer`, `write a ${want} array element such as ${kind === 'bar' ? 'full[s]' : 'tile[s]'}`, e.span);
        } else {
          err(SKETCH_CODES.unknownName, `unknown ${want} '${e.name}'`, dm ? `did you mean '${dm}'?` : `declare it: ${kind === 'bar' ? `barrier ${e.name}[N] count=C` : `smem ${e.name}[N] bytes=B`}`, e.span);
        }
        return undefined;
      }
      if (arr.kind !== want) {
        err(SKETCH_CODES.operandKind, `'${e.name}' is a ${arr.kind} array but ${opName} expects a ${want} here`, `check the operand order: ${opName} ${findOp(opName)?.usage ?? ''}`.trimEnd(), e.span);
        return undefined;
      }
      const index: Expr | undefined = e.index ? intExpr(e.index, scope) : { k: 'num', v: 0 };
      const cta = ctaE ? intExpr(ctaE, scope) : undefined;
      if (!index || (ctaE && !cta)) return undefined;
      const iv = literal(index);
      if (iv !== undefined && arr.length !== undefined && (iv < 0 || iv >= arr.length)) {
        err(SKETCH_CODES.indexRange, `index ${iv} is out of range for ${want} array ${arr.name}[${arr.length}]`, `valid indices are 0 to ${arr.length - 1}`, e.index?.span ?? e.span);
        return undefined;
      }
      const cv = cta ? literal(cta) : undefined;
      if (cv !== undefined && clusterDefault !== undefined && (cv < 0 || cv >= clusterDefault)) {
        err(SKETCH_CODES.indexRange, `CTA rank ${cv} is outside the cluster of ${clusterDefault} CTA${clusterDefault === 1 ? '' : 's'}`, `ranks are 0 to ${clusterDefault - 1}; set cluster=N on the kernel line`, ctaE!.span);
        return undefined;
      }
      // A one-CTA buffer named without @CTA by a role that never runs in that CTA.
      if (!ctaE && arr.ctaOnly !== undefined && ranks && ranks.length && !ranks.includes(arr.ctaOnly)) {
        err(SKETCH_CODES.indexRange, `${arr.name} exists only in CTA ${arr.ctaOnly} (declared cta=${arr.ctaOnly}), and role ${roleName} runs in CTA ${ranks.join(', ')}`, `reach it through distributed shared memory: ${e.name}${e.index ? '[...]' : ''}@${arr.ctaOnly}`, e.span);
        return undefined;
      }
      const ref: BufRef = { name: e.name, index };
      if (cta) ref.cta = cta;
      if (offs.length) {
        const se = offs.slice(1).reduce<SExpr>((a, b) => ({ k: 'bin', op: '+', a, b, span: join(a.span, b.span) }), offs[0]!);
        const off = intExpr(se, scope);
        if (!off) return undefined;
        const ov = evalDefault(off, sizeEnv);
        if (ov !== undefined && arr.bytes !== undefined && (ov < 0 || ov >= arr.bytes)) {
          err(SKETCH_CODES.bufferRange, `byte offset ${ov} is outside ${arr.name}[${showExpr(index)}], which has ${arr.bytes} bytes`, `offsets are 0 to ${arr.bytes - 1}; to reach another element index the array: ${arr.name}[i]`, se.span);
          return undefined;
        }
        ref.offset = off;
        offsetSpans.set(ref, { span: se.span, bytes: arr.bytes });
      }
      return ref;
    };
    /** The offset of each ranged buffer reference, for the check of offset + bytes against the element. */
    const offsetSpans = new Map<BufRef, { span: Span; bytes?: number }>();
    /** E-buffer-range when a ranged reference of `op` with the op's byte count runs past its element. */
    const checkRange = (op: Op): boolean => {
      const o = op as unknown as Record<string, unknown>;
      const bytes = o.bytes as Expr | undefined;
      if (!bytes) return true;
      for (const k of ['dst', 'src', 'buf']) {
        const ref = o[k] as BufRef | undefined;
        const at = ref && offsetSpans.get(ref);
        if (!ref || !at || at.bytes === undefined) continue;
        const ov = evalDefault(ref.offset, sizeEnv);
        const n = evalDefault(bytes, sizeEnv);
        if (ov === undefined || n === undefined || ov + n <= at.bytes) continue;
        err(SKETCH_CODES.bufferRange, `bytes ${ov} to ${ov + n - 1} (offset ${ov}, ${n} bytes) run past the end of ${ref.name}[${showExpr(ref.index)}], which has ${at.bytes} bytes`, `the range must end by byte ${at.bytes}: a smaller offset or byte count`, at.span);
        return false;
      }
      return true;
    };

    const body = block_(block);
    return ok && block ? body : undefined;
  }
}
