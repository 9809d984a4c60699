/**
 * Lowering of operation statements: the mnemonic, its operands (integers, token variables, barrier
 * and buffer references with @CTA and byte offsets) and options, with every check of the operation
 * table (docs/LANGUAGE.md) and the constant ranges known from the parameters' defaults.
 */
import type { CstNode, IToken } from 'chevrotain';
import { showExpr } from '../kernel/expr.js';
import type { BarRef, BufRef, Expr, Op, Stmt } from '../kernel/ir.js';
import { maskRanks } from '../machine/cta-mask.js';
import { cpAsyncSizeProblem, waitGroupProblem } from '../kernel/op-limits.js';
import { MAX_COUNT } from '../model/mbarrier.js';
import { didYouMean, SKETCH_CODES } from './diagnostics.js';
import { literal } from './eval.js';
import { type RawOption, type SExpr, type Span, exprOf, hasBad, join, node, nodes, optionOf, spanOf, tokSpan } from './cst.js';
import type { LowerCtx, RoleLowering } from './lower-context.js';
import type { OpArgs, OperandKind, OpOptionKey, OpSpec } from './ops.js';
import { findOp, parseQualifiers, MNEMONICS } from './ops-spelling.js';

/**
 * One operation statement `[dest =] mnemonic operands options`: the mnemonic and its qualifiers, the
 * target architecture, the operand count and kinds, the options, the constant ranges. Undefined (with
 * the role marked failed) when any check fails.
 */
export function opStmt(r: RoleLowering, mn: IToken, argsNode: CstNode | undefined, dest: IToken | undefined, head: Span): Stmt[] | undefined {
  const c = r.c;
  const fail = () => {
    if (dest) r.vars.add(dest.image);
    r.ok = false;
    return undefined;
  };
  const spec = findOp(mn.image);
  const mnSpan = tokSpan(mn);
  if (!spec) {
    const dm = didYouMean(mn.image, MNEMONICS);
    c.err(SKETCH_CODES.unknownMnemonic, `unknown operation '${mn.image}'`, dm ? `did you mean '${dm}'?` : 'operations are written with their PTX mnemonics; docs/LANGUAGE.md lists them', mnSpan);
    return fail();
  }
  if (argsNode?.recoveredNode) return fail();
  const quals = parseQualifiers(mn.image);
  if (quals?.invalid) {
    const at = quals.invalidAt;
    const span = at && mnSpan.endCol - mnSpan.col === mn.image.length ? { line: mnSpan.line, col: mnSpan.col + at[0], endCol: mnSpan.col + at[1] } : mnSpan;
    c.err(SKETCH_CODES.unknownMnemonic, `${mn.image} is not a valid spelling of ${spec.name}`, quals.invalid, span);
    return fail();
  }
  let bad = false;
  if (spec.arch && c.archKnown && spec.arch !== c.arch) {
    c.err(SKETCH_CODES.arch, `${spec.name} needs ${spec.arch} but the kernel targets ${c.arch}`,
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
      const ro = optionOf(o);
      if (ro) options.push(ro);
      else bad = true;
    }
    const p = node(a, 'operand');
    if (p) operands.push(p);
  };
  const argNodes = [...nodes(argsNode, 'opArg'), ...nodes(argsNode, 'opOption').map((o): CstNode => ({ name: 'opArg', children: { opOption: [o] } }))];
  argNodes.forEach(collect);

  if (dest && !spec.dest) {
    c.err(SKETCH_CODES.assign, `${spec.name} has no result to assign`, `write it without '${dest.image} =': ${spec.name} ${spec.usage}`.trimEnd(), tokSpan(dest));
    bad = true;
  }
  if (!dest && spec.dest === 'required') {
    c.err(SKETCH_CODES.assign, `the result of ${spec.name} must be assigned to a variable`, `write: n = ${spec.name} ${spec.usage}`, mnSpan);
    bad = true;
  }
  if (!arityOk(c, spec, operands, mnSpan, head)) return fail();
  const args: OpArgs = { v: [], rest: [] };
  if (quals?.sem) args.sem = quals.sem;
  if (quals?.scope) args.scope = quals.scope;
  operands.forEach((o, i) => {
    const kind: OperandKind = i < spec.args.length ? spec.args[i]! : 'buf';
    const v = operand(r, o, kind, spec.name);
    if (v === undefined) bad = true;
    else if (i < spec.args.length) args.v[i] = v;
    else args.rest.push(v as BufRef);
  });
  if (!opOptions(r, spec, options, args, operands, head)) bad = true;
  // `_ = mbarrier.arrive …`: PTX's sink for the state result (no token kept).
  const sink = dest?.image === '_' && spec.dest === 'token';
  if (dest && spec.dest && !sink) {
    if (r.assignable(dest.image, tokSpan(dest))) r.vars.add(dest.image);
    else bad = true;
    args.dest = dest.image;
  }
  if (bad) return fail();
  const built = spec.build(args);
  if (quals?.fields) Object.assign(built, quals.fields);
  if (!checkRange(r, built)) return fail();
  return [{ s: 'op', op: built, loc: c.loc(head) }];
}

/** Whether the operation has as many operands as its table entry allows; E-operand-count otherwise. */
function arityOk(c: LowerCtx, spec: OpSpec, operands: CstNode[], mnSpan: Span, head: Span): boolean {
  const min = spec.args.length - (spec.optional ?? 0);
  const max = spec.variadic ? Infinity : spec.args.length;
  if (operands.length >= min && operands.length <= max) return true;
  const expect = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
  const span = operands.length > max ? spanOf(operands[max]) ?? mnSpan : head;
  c.err(SKETCH_CODES.operandCount,
    `${spec.name} takes ${expect} operand${expect === '1' ? '' : 's'} but ${operands.length} ${operands.length === 1 ? 'was' : 'were'} given`,
    spec.usage ? `write: ${spec.name} ${spec.usage}` : `${spec.name} takes no operands`,
    span);
  return false;
}

/** The options of one operation into `args`, then the required ones and the constant ranges; false when any is wrong. */
function opOptions(r: RoleLowering, spec: OpSpec, options: RawOption[], args: OpArgs, operands: CstNode[], head: Span): boolean {
  const c = r.c;
  let bad = false;
  const seen = new Set<string>();
  for (const o of options) {
    const allowed = spec.options ?? [];
    if (!allowed.includes(o.key as OpOptionKey)) {
      const dm = didYouMean(o.key, allowed);
      c.err(SKETCH_CODES.unknownOption, `unknown option '${o.key}' for ${spec.name}`,
        dm ? `did you mean '${dm}'?` : allowed.length ? `${spec.name} accepts: ${allowed.join(', ')}` : `${spec.name} takes no options`, o.keySpan);
      bad = true;
      continue;
    }
    if (seen.has(o.key)) {
      c.err(SKETCH_CODES.duplicate, `option '${o.key}' is given twice`, 'give each option once', o.keySpan);
      bad = true;
      continue;
    }
    seen.add(o.key);
    if (o.key === 'per') {
      const p = c.perOf(o);
      if (p && p !== 'one' && r.electDepth > 0) {
        c.err(SKETCH_CODES.optionValue, `per=${p} inside elect: only the elected thread runs this block, so ${spec.name} here is one thread's`,
          p === 'thread' ? 'move it out of the elect: block for every thread of each warp to perform it, or drop per=' : 'move it out of the elect: block for one thread of each warp to perform it, or drop per=', o.value?.span ?? o.span);
        bad = true;
      } else if (p) args.per = p;
      else bad = true;
    } else if (o.key === 'shape') {
      if (o.value?.kind === 'shape' && o.value.shape.m > 0 && o.value.shape.n > 0 && o.value.shape.k > 0) args.shape = o.value.shape;
      else {
        c.err(SKETCH_CODES.optionValue, 'shape must be written MxNxK', 'for example shape=128x128x64 (elements)', o.value?.span ?? o.span);
        bad = true;
      }
    } else {
      const e = c.exprOption(o, r.scope);
      if (e) args[o.key as 'multicast' | 'chunks' | 'value'] = e;
      else bad = true;
      // A mask known from the defaults that selects no CTA of the cluster (cta-mask.ts).
      const mv = e && o.key === 'multicast' && c.clusterDefault !== undefined ? c.evalDefault(e, c.sizeEnv) : undefined;
      const sel = mv !== undefined ? maskRanks(mv, c.clusterDefault!) : undefined;
      if (sel && !Array.isArray(sel)) {
        c.err(SKETCH_CODES.optionValue, `${sel.problem}: ${spec.name} would deliver to no CTA`, `set the bits of the destination CTA ranks (0..${c.clusterDefault! - 1}): multicast=${(1 << c.clusterDefault!) - 1} is every CTA of the cluster`, o.value?.span ?? o.span);
        bad = true;
      }
    }
  }
  for (const key of spec.required ?? []) {
    if (!seen.has(key)) {
      c.err(SKETCH_CODES.missingOption, `${spec.name} needs the option ${key}=`, `write: ${spec.name} ${spec.usage}`, head);
      bad = true;
    }
  }
  if (!constantRanges(r.c, spec, args, operands, head)) bad = true;
  return !bad;
}

/** The constant operands of one operation against their ranges (init count, the machine's operand rules, work cycles); false when any is wrong. */
function constantRanges(c: LowerCtx, spec: OpSpec, args: OpArgs, operands: CstNode[], head: Span): boolean {
  let bad = false;
  if (spec.name === 'mbarrier.init' && args.v[1]) {
    const v = c.evalDefault(args.v[1] as Expr, c.sizeEnv, spanOf(operands[1]) ?? head);
    if (v !== undefined && (v < 1 || v > MAX_COUNT)) {
      c.err(SKETCH_CODES.initCount, `init count ${v} is outside [1, ${MAX_COUNT}]`, 'an mbarrier expects 1 to 2^20 - 1 arrivals per phase', spanOf(operands[1]) ?? head);
      bad = true;
    }
  }
  // The machine's operand rules (op-limits.ts) on the constants known here, at their operand.
  const rule = spec.name === 'cp.async' ? { i: 1, code: SKETCH_CODES.cpSize, why: cpAsyncSizeProblem, hint: 'write 4, 8 or 16: each thread copies that many bytes' }
    : spec.name === 'cp.async.wait_group' ? { i: 0, code: SKETCH_CODES.waitGroup, why: waitGroupProblem, hint: 'N is how many of the most recent groups may stay pending: 0 waits for all' } : null;
  if (rule && args.v[rule.i]) {
    const v = c.evalDefault(args.v[rule.i] as Expr, c.sizeEnv);
    const why = v === undefined ? null : rule.why(v);
    if (why) {
      c.err(rule.code, why, rule.hint, spanOf(operands[rule.i]) ?? head);
      bad = true;
    }
  }
  if (spec.name === 'work' && args.v[0]) {
    const v = c.evalDefault(args.v[0] as Expr, c.sizeEnv);
    if (v !== undefined && v < 0) {
      c.err(SKETCH_CODES.workCycles, `work of ${v} cycles is negative`, 'work takes a non-negative number of cycles', spanOf(operands[0]) ?? head);
      bad = true;
    }
  }
  return !bad;
}

/** One operand of `opName` of the given kind: an integer, a token variable, or a barrier / buffer reference (with @CTA, + offset). */
function operand(r: RoleLowering, o: CstNode, kind: OperandKind, opName: string): BarRef | BufRef | Expr | string | undefined {
  const c = r.c;
  let e = exprOf(node(o, 'expr'));
  if (hasBad(e)) return undefined;
  const at = node(o, 'unaryExpr');
  const ctaE = at ? exprOf(at) : undefined;
  if (ctaE && hasBad(ctaE)) return undefined;
  const span = ctaE ? join(e.span, ctaE.span) : e.span;
  if (kind === 'int') {
    if (ctaE) {
      c.err(SKETCH_CODES.operandKind, 'only barrier and buffer references take @CTA', `this operand of ${opName} is an integer`, span);
      return undefined;
    }
    return c.intExpr(e, r.scope);
  }
  if (kind === 'var') {
    if (e.k !== 'name' || e.index || ctaE) {
      c.err(SKETCH_CODES.operandKind, `${opName} expects a token variable here`, `write the variable an arrive assigned: tok = mbarrier.arrive BAR, then ${opName} ... tok`, span);
      return undefined;
    }
    if (!r.vars.has(e.name)) {
      const dm = didYouMean(e.name, [...r.vars]);
      c.err(SKETCH_CODES.unknownName, `unknown token variable '${e.name}'`, dm ? `did you mean '${dm}'?` : 'assign it first: tok = mbarrier.arrive BAR', e.span);
      return undefined;
    }
    return e.name;
  }
  return reference(r, e, ctaE, span, kind, opName);
}

/** A barrier or buffer reference `A[i]`, `A[i]@CTA` or (a buffer) `A[i] + OFF`, checked against A's declaration. */
function reference(r: RoleLowering, e: SExpr, ctaE: SExpr | undefined, span: Span, kind: 'bar' | 'buf', opName: string): BarRef | BufRef | undefined {
  const c = r.c;
  const want = kind === 'bar' ? 'barrier' : 'buffer';
  // A byte offset into a buffer: BUF + OFF (a chain of + whose leftmost term is the reference).
  const offs: SExpr[] = [];
  const whole = e;
  if (kind === 'buf') while (e.k === 'bin' && e.op === '+') { offs.unshift(e.b); e = e.a; }
  if (offs.length && e.k !== 'name') e = whole;
  if (e.k !== 'name') {
    c.err(SKETCH_CODES.operandKind, `${opName} expects a ${want} reference here`, `write a ${want} array element such as ${kind === 'bar' ? 'full[s]' : 'tile[s]'}`, span);
    return undefined;
  }
  const arr = c.arrays.get(e.name);
  if (!arr) {
    const known = r.scope.has(e.name);
    const dm = didYouMean(e.name, [...c.arrays.values()].filter((a) => a.kind === want).map((a) => a.name));
    if (known) {
      c.err(SKETCH_CODES.operandKind, `${opName} expects a ${want} reference but '${e.name}' is an integer`, `write a ${want} array element such as ${kind === 'bar' ? 'full[s]' : 'tile[s]'}`, e.span);
    } else {
      c.err(SKETCH_CODES.unknownName, `unknown ${want} '${e.name}'`, dm ? `did you mean '${dm}'?` : `declare it: ${kind === 'bar' ? `barrier ${e.name}[N] count=C` : `smem ${e.name}[N] bytes=B`}`, e.span);
    }
    return undefined;
  }
  if (arr.kind !== want) {
    c.err(SKETCH_CODES.operandKind, `'${e.name}' is a ${arr.kind} array but ${opName} expects a ${want} here`, `check the operand order: ${opName} ${findOp(opName)?.usage ?? ''}`.trimEnd(), e.span);
    return undefined;
  }
  const index: Expr | undefined = e.index ? c.intExpr(e.index, r.scope) : { k: 'num', v: 0 };
  const cta = ctaE ? c.intExpr(ctaE, r.scope) : undefined;
  if (!index || (ctaE && !cta)) return undefined;
  const iv = literal(index);
  if (iv !== undefined && arr.length !== undefined && (iv < 0 || iv >= arr.length)) {
    c.err(SKETCH_CODES.indexRange, `index ${iv} is out of range for ${want} array ${arr.name}[${arr.length}]`, `valid indices are 0 to ${arr.length - 1}`, e.index?.span ?? e.span);
    return undefined;
  }
  const cv = cta ? literal(cta) : undefined;
  if (cv !== undefined && c.clusterDefault !== undefined && (cv < 0 || cv >= c.clusterDefault)) {
    c.err(SKETCH_CODES.indexRange, `CTA rank ${cv} is outside the cluster of ${c.clusterDefault} CTA${c.clusterDefault === 1 ? '' : 's'}`, `ranks are 0 to ${c.clusterDefault - 1}; set cluster=N on the kernel line`, ctaE!.span);
    return undefined;
  }
  // A one-CTA buffer named without @CTA by a role that never runs in that CTA.
  if (!ctaE && arr.ctaOnly !== undefined && r.ranks && r.ranks.length && !r.ranks.includes(arr.ctaOnly)) {
    c.err(SKETCH_CODES.indexRange, `${arr.name} exists only in CTA ${arr.ctaOnly} (declared cta=${arr.ctaOnly}), and role ${r.roleName} runs in CTA ${r.ranks.join(', ')}`, `reach it through distributed shared memory: ${e.name}${e.index ? '[...]' : ''}@${arr.ctaOnly}`, e.span);
    return undefined;
  }
  const ref: BufRef = { name: e.name, index };
  if (cta) ref.cta = cta;
  if (offs.length) {
    const se = offs.slice(1).reduce<SExpr>((a, b) => ({ k: 'bin', op: '+', a, b, span: join(a.span, b.span) }), offs[0]!);
    const off = c.intExpr(se, r.scope);
    if (!off) return undefined;
    const ov = c.evalDefault(off, c.sizeEnv);
    if (ov !== undefined && arr.bytes !== undefined && (ov < 0 || ov >= arr.bytes)) {
      c.err(SKETCH_CODES.bufferRange, `byte offset ${ov} is outside ${arr.name}[${showExpr(index)}], which has ${arr.bytes} bytes`, `offsets are 0 to ${arr.bytes - 1}; to reach another element index the array: ${arr.name}[i]`, se.span);
      return undefined;
    }
    ref.offset = off;
    r.offsetSpans.set(ref, { span: se.span, bytes: arr.bytes });
  }
  return ref;
}

/** E-buffer-range when a ranged reference of `op` with the op's byte count runs past its element. */
function checkRange(r: RoleLowering, op: Op): boolean {
  const c = r.c;
  const o = op as unknown as Record<string, unknown>;
  const bytes = o.bytes as Expr | undefined;
  if (!bytes) return true;
  for (const k of ['dst', 'src', 'buf']) {
    const ref = o[k] as BufRef | undefined;
    const at = ref && r.offsetSpans.get(ref);
    if (!ref || !at || at.bytes === undefined) continue;
    const ov = c.evalDefault(ref.offset, c.sizeEnv);
    const n = c.evalDefault(bytes, c.sizeEnv);
    if (ov === undefined || n === undefined || ov + n <= at.bytes) continue;
    c.err(SKETCH_CODES.bufferRange, `bytes ${ov} to ${ov + n - 1} (offset ${ov}, ${n} bytes) run past the end of ${ref.name}[${showExpr(ref.index)}], which has ${at.bytes} bytes`, `the range must end by byte ${at.bytes}: a smaller offset or byte count`, at.span);
    return false;
  }
  return true;
}
