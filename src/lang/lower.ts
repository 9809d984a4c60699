/**
 * Lowering: the CST of a sketch becomes the kernel IR, with every semantic check of the language
 * (names, operand counts and kinds, options, constant ranges, duplicates). Tolerant of partial
 * CST nodes left by syntax-error recovery: what cannot be read is skipped silently (the syntax
 * error was already reported). This module lowers the declarations (parameters, the kernel line,
 * barrier and buffer arrays, roles); role bodies are `lower-stmts.ts`, operations `lower-ops.ts`,
 * the shared state and expression readers `lower-context.ts`.
 */
import type { CstNode } from 'chevrotain';
import type { BarrierDecl, BufferDecl, Expr, Kernel, ParamDecl, Per, RoleDecl } from '../kernel/ir.js';
import { MAX_COUNT } from '../model/mbarrier.js';
import { didYouMean, SKETCH_CODES, type SketchDiagnostic } from './diagnostics.js';
import { arithHint, literal, tryEval } from './eval.js';
import { NO_SPAN, type RawOption, type Span, exprOf, hasBad, isTok, lineBreakIn, node, nodes, stringText, tok, tokSpan } from './cst.js';
import { LowerCtx } from './lower-context.js';
import { lowerRole } from './lower-stmts.js';
export type { Span } from './cst.js';

/**
 * Lowers a parsed sketch. Pushes diagnostics; returns the kernel (possibly with errors reported).
 * Throws `StopLowering` (./limits.ts) when a diagnostic would exceed the limit on errors per file.
 */
export function lower(
  cst: CstNode, file: string, diags: SketchDiagnostic[], syntaxErrors: boolean, lineEnd: Map<number, number> = new Map(),
): Kernel | undefined {
  const lc = new LowerCtx(file, diags, lineEnd);
  const items = nodes(cst, 'topItem').map((t) => Object.values(t.children)[0]?.[0]).filter((x): x is CstNode => !!x && !isTok(x));
  const ofKind = (name: string) => items.filter((n) => n.name === name);

  const params = paramDecls(lc, ofKind('paramDecl'));
  const head = kernelLine(lc, ofKind('kernelDecl'), syntaxErrors);
  // A size outside 1..16 is an error of the kernel line already; the checks that use the size
  // (roles' CTAs, multicast masks, ranks) then have none (a size of 2^53 − 1 built an array of it).
  const cluster = lc.evalDefault(head.cluster);
  lc.clusterDefault = cluster !== undefined && cluster >= 1 && cluster <= MAX_CLUSTER ? cluster : undefined;
  lc.sizeEnv = lc.clusterDefault !== undefined ? { ncta: lc.clusterDefault } : {};
  const barriers = barrierDecls(lc, ofKind('barrierDecl'));
  const buffers = bufferDecls(lc, ofKind('bufferDecl'));

  // ---- statements outside roles
  const stray = ofKind('stmt');
  const firstSyntax = diags.length ? Math.min(...diags.map((d) => d.line)) : Infinity;
  for (const n of stray) {
    const span = lc.headOf(Object.values(n.children)[0]?.[0] as CstNode) ?? NO_SPAN;
    if (span.line >= firstSyntax) continue;
    lc.err(SKETCH_CODES.syntax, 'statements belong inside a role', "indent it under a line such as 'role producer warps=1 per=one:'", span);
    break;
  }

  const roles: RoleDecl[] = [];
  const roleNames = new Map<string, Span>();
  for (const n of ofKind('roleDecl')) {
    const r = roleDecl(lc, n, roleNames);
    if (r) roles.push(r);
  }

  const k: Kernel = { name: head.name, arch: lc.arch, params, cluster: head.cluster, barriers, buffers, roles, file };
  if (head.grid) k.grid = head.grid;
  if (head.resident) k.resident = head.resident;
  if (head.description !== undefined) k.description = head.description;
  if (head.span !== NO_SPAN) k.loc = { file, line: head.span.line, col: head.span.col, endCol: head.span.endCol };
  return k;
}

/** The parameter declarations (`param NAME = LITERAL`), each default into `lc.paramValues`. */
function paramDecls(lc: LowerCtx, paramNodes: CstNode[]): ParamDecl[] {
  const params: ParamDecl[] = [];
  for (const n of paramNodes) {
    const id = tok(n, 'Ident');
    if (!id) continue;
    const span = lc.headOf(n) ?? tokSpan(id);
    if (!lc.claim(id.image, tokSpan(id), 'parameter')) continue;
    // Declared even when its default is refused below: its uses are no knock-on 'unknown name'.
    lc.paramNames.add(id.image);
    const se = exprOf(node(n, 'expr'));
    if (hasBad(se)) continue;
    const e = lc.plainExpr(se);
    const r = e ? tryEval(e, () => undefined) : undefined;
    if (r && 'fault' in r) {
      lc.err(SKETCH_CODES.arith, `the default of parameter ${id.image}: ${r.fault}`, arithHint(r.fault), se.span);
      continue;
    }
    const v = r?.v;
    if (v === undefined || !Number.isInteger(v)) {
      lc.err(SKETCH_CODES.paramValue, `the default of parameter ${id.image} must be an integer`, 'write an integer literal such as 4, 0x1000 or 16_384 (override it with --set NAME=VALUE)', se.span);
      continue;
    }
    params.push({ name: id.image, value: v, loc: lc.loc(span) });
    lc.paramValues[id.image] = v;
  }
  return params;
}

/** What the kernel line declares (the arch goes to `lc.arch`). */
interface KernelHead {
  name: string;
  cluster: Expr;
  grid?: Expr;
  resident?: Expr;
  description?: string;
  span: Span;
}

/** CTAs in a cluster at most (16 with the non-portable size on sm_90 and later; 8 portable). */
const MAX_CLUSTER = 16;

/** An error at `span` when the string `text` (the kernel's name or description) holds a line break. */
function oneLine(lc: LowerCtx, what: string, text: string, span: Span): void {
  const c = lineBreakIn(text);
  if (c) lc.err(SKETCH_CODES.optionValue, `${what} contains a line break (${c}): it must be one line`, 'remove the escape (\\n, \\r, \\u2028, …) from the string', span);
}

/** The kernel line (`kernel NAME arch=... cluster=... [grid=] [resident=] [description=]`); one per sketch. */
function kernelLine(lc: LowerCtx, kernels: CstNode[], syntaxErrors: boolean): KernelHead {
  let name = 'sketch';
  let cluster: Expr = { k: 'num', v: 1 };
  let grid: Expr | undefined;
  let resident: Expr | undefined;
  let description: string | undefined;
  let kernelSpan: Span = NO_SPAN;
  if (kernels.length === 0 && !syntaxErrors) {
    lc.err(SKETCH_CODES.missingKernel, 'the sketch has no kernel declaration', "start the file with a line such as 'kernel NAME arch=sm_100a cluster=1'", NO_SPAN);
  }
  kernels.forEach((n, i) => {
    const id = tok(n, 'Ident');
    const span = lc.headOf(n) ?? NO_SPAN;
    if (i > 0) {
      lc.err(SKETCH_CODES.duplicate, `a second kernel declaration (the first is on line ${kernelSpan.line})`, 'a sketch file describes one kernel', span);
      return;
    }
    kernelSpan = span;
    if (id) name = id.image;
    const quoted = tok(n, 'name');
    if (quoted) {
      name = stringText(quoted.image);
      oneLine(lc, 'the kernel name', name, tokSpan(quoted));
    }
    const opts = lc.readOptions(nodes(n, 'declOption'), 'the kernel', ['arch', 'cluster', 'grid', 'resident', 'description']);
    const a = opts.get('arch');
    if (a) {
      const v = a.value?.kind === 'expr' && a.value.e.k === 'name' && !a.value.e.index ? a.value.e.name : undefined;
      if (v === 'sm_90a' || v === 'sm_100a') lc.arch = v;
      else {
        lc.archKnown = false;
        lc.err(SKETCH_CODES.optionValue, 'arch must be sm_90a (Hopper) or sm_100a (Blackwell)', 'write arch=sm_90a or arch=sm_100a', a.value?.span ?? a.span);
      }
    }
    const c = opts.get('cluster');
    if (c) {
      const e = lc.exprOption(c, lc.staticScope('the cluster size'));
      if (e) {
        cluster = e;
        const v = lc.evalDefault(e, {}, c.value!.span);
        if (v !== undefined && (v < 1 || v > MAX_CLUSTER)) lc.err(SKETCH_CODES.optionValue, `cluster size ${v} is outside 1..${MAX_CLUSTER}`, 'a cluster has 1 to 16 CTAs (portable maximum 8)', c.value!.span);
      }
    }
    const g = opts.get('grid');
    if (g) grid = lc.exprOption(g, lc.staticScope('the grid size')) ?? grid;
    const rs = opts.get('resident'); // `resident=all`: every cluster (the default)
    if (rs && !(rs.value?.kind === 'expr' && rs.value.e.k === 'name' && rs.value.e.name === 'all' && !rs.value.e.index)) resident = lc.exprOption(rs, lc.staticScope('the resident clusters'));
    const d = opts.get('description');
    if (d) {
      if (d.value?.kind === 'string') {
        description = d.value.text;
        oneLine(lc, 'the description', description, d.value.span);
      }
      else lc.err(SKETCH_CODES.optionValue, 'description must be a string', 'write description="what the kernel does"', d.value?.span ?? d.span);
    }
  });
  const head: KernelHead = { name, cluster, span: kernelSpan };
  if (grid) head.grid = grid;
  if (resident) head.resident = resident;
  if (description !== undefined) head.description = description;
  return head;
}

/** The barrier array declarations (`barrier NAME[N] count=C [manual] [cta=R]`). */
function barrierDecls(lc: LowerCtx, barrierNodes: CstNode[]): BarrierDecl[] {
  const barriers: BarrierDecl[] = [];
  for (const n of barrierNodes) {
    const id = tok(n, 'Ident');
    if (!id) continue;
    const span = lc.headOf(n) ?? tokSpan(id);
    const ok = lc.claim(id.image, tokSpan(id), 'barrier array');
    const length = lc.lengthOf(n, `the length of barrier array ${id.image}`);
    const opts = lc.readOptions(nodes(n, 'declOption'), `barrier ${id.image}`, ['count', 'manual', 'cta']);
    const c = opts.get('count');
    let count: Expr | undefined;
    if (!c) lc.err(SKETCH_CODES.missingOption, `barrier ${id.image} needs an init count`, `write count=N: the arrivals each phase expects, 1 to ${MAX_COUNT}`, span);
    else {
      count = lc.exprOption(c, lc.sizeScope(`the init count of ${id.image}`));
      const v = lc.evalDefault(count, lc.sizeEnv, c.value?.span);
      if (count && v !== undefined && (v < 1 || v > MAX_COUNT)) {
        lc.err(SKETCH_CODES.initCount, `init count ${v} of barrier ${id.image} is outside [1, ${MAX_COUNT}]`, 'an mbarrier expects 1 to 2^20 - 1 arrivals per phase', c.value!.span);
        count = undefined;
      }
    }
    const m = opts.get('manual');
    if (m?.value) lc.err(SKETCH_CODES.optionValue, "'manual' takes no value", "write just 'manual' to initialize the barriers with mbarrier.init in a role", m.value.span);
    const ct = opts.get('cta');
    const cta = ct ? lc.exprOption(ct, lc.staticScope(`the CTA of ${id.image}`)) : undefined;
    if (ok) lc.arrays.set(id.image, { name: id.image, kind: 'barrier', length: lc.evalDefault(length, lc.sizeEnv), span: tokSpan(id) });
    if (!ok || !length || !count || (ct && !cta)) continue;
    const d: BarrierDecl = { name: id.image, length, count, init: m ? 'manual' : 'auto', loc: lc.loc(span) };
    if (cta) d.cta = cta;
    if (!node(n, 'arrayLen')) d.scalar = true;
    barriers.push(d);
  }
  return barriers;
}

/** The buffer array declarations (`smem` / `tmem` / `gmem NAME[N] bytes=B ...`), their aliases resolved after all are declared. */
function bufferDecls(lc: LowerCtx, bufferNodes: CstNode[]): BufferDecl[] {
  const buffers: BufferDecl[] = [];
  const aliasOpts: { d: BufferDecl; o: RawOption }[] = [];
  for (const n of bufferNodes) {
    const id = tok(n, 'Ident');
    if (!id) continue;
    const space = tok(n, 'KwTmem') ? 'tmem' : tok(n, 'KwGmem') ? 'gmem' : 'smem';
    const span = lc.headOf(n) ?? tokSpan(id);
    const ok = lc.claim(id.image, tokSpan(id), 'buffer array');
    const length = lc.lengthOf(n, `the length of buffer array ${id.image}`);
    const opts = lc.readOptions(nodes(n, 'declOption'), `${space} ${id.image}`, space === 'tmem' ? ['bytes', 'cols', 'alias', 'cta'] : space === 'gmem' ? ['bytes', 'init'] : ['bytes', 'alias', 'cta']);
    const b = opts.get('bytes');
    const c = opts.get('cols');
    const cols = c ? lc.exprOption(c, lc.sizeScope(`the columns of ${id.image}`)) : undefined;
    let bytes: Expr | undefined = space === 'gmem' ? { k: 'num', v: 4 } : undefined; // a global location: one 32-bit word
    const ini = opts.get('init');
    if (!b && !bytes) lc.err(SKETCH_CODES.missingOption, `${space} ${id.image} needs a size`, 'write bytes=N: the size in bytes of each element of the array', span);
    else if (b) bytes = lc.exprOption(b, lc.sizeScope(`the size of ${id.image}`));
    const ct = opts.get('cta');
    const cta = ct ? lc.exprOption(ct, lc.staticScope(`the CTA of ${id.image}`)) : undefined;
    const al = opts.get('alias');
    if (ok) lc.arrays.set(id.image, { name: id.image, kind: 'buffer', length: lc.evalDefault(length, lc.sizeEnv), bytes: lc.evalDefault(bytes, lc.sizeEnv), ctaOnly: lc.evalDefault(cta, lc.sizeEnv), span: tokSpan(id) });
    if (!ok || !length || !bytes || (ct && !cta)) continue;
    const d: BufferDecl = { name: id.image, space, length, bytes, ...(cols ? { cols } : {}), loc: lc.loc(span), ...(node(n, 'arrayLen') ? {} : { scalar: true }) };
    if (cta) d.cta = cta;
    if (ini && !(d.init = lc.exprOption(ini, lc.staticScope(`the init value of ${id.image}`)))) delete d.init;
    if (al) aliasOpts.push({ d, o: al });
    buffers.push(d);
  }
  for (const { d, o } of aliasOpts) {
    const alias = aliasOf(lc, d, o);
    if (alias) d.alias = alias;
    else buffers.splice(buffers.indexOf(d), 1);
  }
  return buffers;
}

/** The target of `alias=A` / `alias=A[E]` on buffer declaration `d`: a buffer array of the same space, E a constant. */
function aliasOf(lc: LowerCtx, d: BufferDecl, o: RawOption): BufferDecl['alias'] | undefined {
  const v = o.value?.kind === 'expr' ? o.value.e : undefined;
  if (!v || v.k !== 'name') {
    lc.err(SKETCH_CODES.alias, `alias= of ${d.name} must name a buffer array`, `write alias=A or alias=A[i]: ${d.name} then views A's bytes from element i`, o.value?.span ?? o.span);
    return undefined;
  }
  const arr = lc.arrays.get(v.name);
  if (!arr || arr.kind !== 'buffer' || v.name === d.name) {
    const dm = didYouMean(v.name, [...lc.arrays.values()].filter((a) => a.kind === 'buffer' && a.name !== d.name).map((a) => a.name));
    lc.err(SKETCH_CODES.alias, v.name === d.name ? `${d.name} cannot be an alias of itself` : `alias=${v.name}: '${v.name}' is not a buffer array`, dm ? `did you mean '${dm}'?` : 'declare the array the alias views: smem A[N] bytes=B', v.span);
    return undefined;
  }
  const index = v.index ? lc.intExpr(v.index, lc.sizeScope(`the element ${d.name} starts at`)) : { k: 'num' as const, v: 0 };
  if (!index) return undefined;
  const at = lc.evalDefault(index, lc.sizeEnv);
  if (at !== undefined && arr.length !== undefined && (at < 0 || at >= arr.length)) {
    lc.err(SKETCH_CODES.indexRange, `index ${at} is out of range for buffer array ${arr.name}[${arr.length}]`, `valid indices are 0 to ${arr.length - 1}`, v.index?.span ?? v.span);
    return undefined;
  }
  const mine = lc.arrays.get(d.name);
  if (at !== undefined && mine?.length !== undefined && mine.bytes !== undefined && arr.length !== undefined && arr.bytes !== undefined) {
    const end = at * arr.bytes + mine.length * mine.bytes;
    if (end > arr.length * arr.bytes) {
      lc.err(SKETCH_CODES.alias, `${d.name} (${mine.length} × ${mine.bytes} bytes from ${arr.name}[${at}]) ends at byte ${end}, past the ${arr.length * arr.bytes} bytes of ${arr.name}`, 'an alias views storage that exists: make it smaller or start it earlier', o.value!.span);
      return undefined;
    }
  }
  return { name: v.name, index };
}

/** A role's size options: `warps=`, `warpgroups=`, `threads=` (positive literals) and `per=`; `ok` false when one is wrong. */
function roleSize(lc: LowerCtx, opts: Map<string, RawOption>): { warps: number; threads: number | undefined; per: Per; ok: boolean } {
  let ok = true;
  const intLit = (o: RawOption | undefined, what: string): number | undefined => {
    if (!o) return undefined;
    const e = o.value?.kind === 'expr' && !hasBad(o.value.e) ? lc.plainExpr(o.value.e) : undefined;
    const v = e ? literal(e) : undefined;
    if (v === undefined || !Number.isInteger(v) || v < 1) {
      lc.err(SKETCH_CODES.optionValue, `${what} must be a positive integer literal`, `write ${o.key}=N with a number (roles have a fixed size)`, o.value?.span ?? o.span);
      ok = false;
      return undefined;
    }
    return v;
  };
  let warps = intLit(opts.get('warps'), 'warps') ?? 1;
  const wg = opts.get('warpgroups');
  if (wg) {
    if (opts.get('warps')) {
      lc.err(SKETCH_CODES.optionValue, 'give either warps or warpgroups, not both', 'a warpgroup is 4 warps', wg.span);
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
      lc.err(SKETCH_CODES.optionValue, `threads=${threads} do not fit in ${warps} warp${warps === 1 ? '' : 's'} (at most ${warps * 32} threads)`, `give warps=${Math.ceil(threads / 32)}, or leave warps out: threads alone sets the warps they fill`, t.value?.span ?? t.span);
      ok = false;
    }
  }
  let per: Per = 'thread';
  const p = opts.get('per');
  if (p) {
    const v = lc.perOf(p);
    if (v) per = v;
    else ok = false;
  }
  return { warps, threads, per, ok };
}

/** One role declaration (`role NAME warps=W per=P [instances=N] [where=C | cta=R]:` and its body). */
function roleDecl(lc: LowerCtx, n: CstNode, roleNames: Map<string, Span>): RoleDecl | undefined {
  const id = tok(n, 'Ident');
  if (!id) return undefined;
  const head = lc.headOf(n) ?? tokSpan(id);
  let ok = true;
  const prev = roleNames.get(id.image);
  if (prev) {
    lc.err(SKETCH_CODES.duplicate, `role '${id.image}' is already declared (line ${prev.line})`, 'give each role its own name (use instances=N for several copies)', tokSpan(id));
    ok = false;
  } else roleNames.set(id.image, tokSpan(id));
  const opts = lc.readOptions(nodes(n, 'declOption'), `role ${id.image}`, ['warps', 'warpgroups', 'threads', 'per', 'instances', 'where', 'cta']);
  const { warps, threads, per, ok: sized } = roleSize(lc, opts);
  if (!sized) ok = false;
  const inst = opts.get('instances');
  const instances = inst ? lc.exprOption(inst, lc.staticScope(`the instances of role ${id.image}`)) : undefined;
  if (inst && !instances) ok = false;
  if (inst && instances) {
    const v = lc.evalDefault(instances, {}, inst.value!.span);
    if (v !== undefined && v < 0) {
      lc.err(SKETCH_CODES.optionValue, `role ${id.image} has instances=${v}; the number of instances cannot be negative`, 'give instances=N with N ≥ 0 (0: the role does not run)', inst.value!.span);
      ok = false;
    }
  }
  const wh = opts.get('where');
  let where = wh ? lc.exprOption(wh, lc.staticScope(`the where-condition of role ${id.image}`, ['cta', 'ncta', 'clusterid'])) : undefined;
  if (wh && !where) ok = false;
  const ct = opts.get('cta');
  if (ct) {
    if (wh) {
      lc.err(SKETCH_CODES.optionValue, 'give either cta= or where=, not both', 'cta=N is short for where=cta == N', ct.span);
      ok = false;
    }
    const e = lc.exprOption(ct, lc.staticScope(`the CTA of role ${id.image}`));
    if (e) where = { k: 'bin', op: '==', a: { k: 'var', name: 'cta' }, b: e };
    else ok = false;
  }
  // The CTA ranks the role runs in (with the defaults), for references to one-CTA buffers.
  const cd = lc.clusterDefault;
  const ranks = cd === undefined ? undefined
    : Array.from({ length: cd }, (_, r) => r).filter((r) => !where || lc.evalDefault(where, { cta: r, ncta: cd, clusterid: 0 }) !== 0);
  const body = lowerRole(lc, node(n, 'block'), id.image, ranks);
  if (!ok || !body) return undefined;
  const r: RoleDecl = { name: id.image, warps, per, body, loc: lc.loc(head) };
  if (threads !== undefined) r.threads = threads;
  if (instances) {
    r.instances = instances;
    r.instancesLoc = lc.loc(inst!.value!.span);
  }
  if (where) r.where = where;
  return r;
}
