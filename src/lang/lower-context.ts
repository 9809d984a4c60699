/**
 * The state every part of the lowering shares: the file and its diagnostics, the declared names
 * and arrays, the parameters' defaults, and the readers of options and expressions that report
 * into the diagnostics (E-unknown-option, E-unknown-name, E-operand-kind, E-arith, ...).
 */
import type { CstNode, IToken } from 'chevrotain';
import type { Arch, BufRef, Expr, Per, SrcLoc } from '../kernel/ir.js';
import { didYouMean, SKETCH_CODES, type SketchCode, type SketchDiagnostic } from './diagnostics.js';
import { LIMITS, StopLowering } from './limits.js';
import { arithHint, tryEval } from './eval.js';
import { BUILTIN_NAMES, type RawOption, type SExpr, type Span, exprOf, foldS, hasBad, node, okTok, optionOf, spanOf, tokSpan } from './cst.js';

/** A declared barrier or buffer array, with the sizes its parameters' defaults give. */
export interface ArrayInfo {
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
export interface Scope {
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
 * One sketch's lowering state. The kernel line sets `arch`, `archKnown`, `clusterDefault` and
 * `sizeEnv`; the parameters fill `paramNames` and `paramValues`; the declarations fill `arrays`.
 * Every reporting method pushes onto `diags` and throws {@link StopLowering} past the limit.
 */
export class LowerCtx {
  /** Barrier and buffer arrays by name. */
  readonly arrays = new Map<string, ArrayInfo>();
  /** Declared names (parameters, barrier and buffer arrays share one namespace). */
  private readonly declared = new Map<string, Span>();
  /** Names of the declared parameters. */
  readonly paramNames = new Set<string>();
  /** Each parameter's default. */
  readonly paramValues: Record<string, number> = Object.create(null) as Record<string, number>;
  arch: Arch = 'sm_100a';
  /** False when the kernel line's arch= was not understood (no arch checks then). */
  archKnown = true;
  /** The cluster size with the parameters' defaults (undefined when it cannot be evaluated). */
  clusterDefault: number | undefined;
  /** `ncta` with the defaults, for sizes that may read it. */
  sizeEnv: Record<string, number> = {};

  constructor(readonly file: string, readonly diags: SketchDiagnostic[], private readonly lineEnd: Map<number, number>) {}

  /** Span of a statement or declaration: from its first token to the end of that line. */
  headOf(n: CstNode | undefined): Span | undefined {
    if (!n) return undefined;
    let first: IToken | undefined;
    for (const k in n.children) {
      for (const c of n.children[k]!) {
        if ('image' in c && c.image !== '' && okTok(c) && (!first || c.startOffset < first.startOffset)) first = c;
      }
    }
    if (!first) return spanOf(n, ['block', 'elifClause', 'elseClause']);
    const s = tokSpan(first);
    return { line: s.line, col: s.col, endCol: Math.max(s.endCol, this.lineEnd.get(s.line) ?? 0) };
  }

  /** Reports a diagnostic at `span`. */
  err(code: SketchCode, message: string, hint: string, span: Span): void {
    if (this.diags.length >= LIMITS.errors) throw new StopLowering();
    this.diags.push({ code, message, hint, file: this.file, line: span.line, col: span.col, endCol: Math.max(span.endCol, span.col + 1) });
  }

  /**
   * Declares `name` in the one namespace of parameters, barrier and buffer arrays; false (after
   * E-duplicate) when it is a builtin or already declared.
   */
  claim(name: string, span: Span, what: string): boolean {
    if (BUILTIN_NAMES.includes(name)) {
      this.err(SKETCH_CODES.duplicate, `'${name}' is a builtin name and cannot be declared`, `builtins: ${BUILTIN_NAMES.join(', ')}; choose another name`, span);
      return false;
    }
    const prev = this.declared.get(name);
    if (prev) {
      this.err(SKETCH_CODES.duplicate, `'${name}' is already declared (line ${prev.line})`, `rename this ${what} or remove one of the declarations`, span);
      return false;
    }
    this.declared.set(name, span);
    return true;
  }

  /** The IR location of a span of this file. */
  loc(s: Span): SrcLoc {
    return { file: this.file, line: s.line, col: s.col, endCol: s.endCol };
  }

  /** A scope of parameters (and the `extra` builtins) for sizes and other constants. */
  staticScope(what: string, extra: string[] = []): Scope {
    const paramNames = this.paramNames;
    return {
      has: (n) => paramNames.has(n) || extra.includes(n),
      list: () => [...paramNames, ...extra],
      what,
      allowed: `only parameters${extra.length ? ` and ${extra.join(', ')}` : ''} may appear here`,
    };
  }

  /** The scope of array sizes and counts: parameters and `ncta`. */
  sizeScope(what: string): Scope {
    return this.staticScope(what, ['ncta']);
  }

  /** The value with the parameters' defaults; a fault is reported at `span` (when given) as E-arith. */
  evalDefault(e: Expr | undefined, extra: Record<string, number> = {}, span?: Span): number | undefined {
    if (!e) return undefined;
    const paramValues = this.paramValues;
    const r = tryEval(e, (n) => (Object.hasOwn(extra, n) ? extra[n] : Object.hasOwn(paramValues, n) ? paramValues[n] : undefined));
    if (r && 'fault' in r) {
      if (span) this.err(SKETCH_CODES.arith, r.fault, arithHint(r.fault), span);
      return undefined;
    }
    return r?.v;
  }

  /** The options of a declaration, each known key once (E-unknown-option, E-duplicate otherwise). */
  readOptions(list: CstNode[], owner: string, allowed: string[]): Map<string, RawOption> {
    const out = new Map<string, RawOption>();
    for (const n of list) {
      const o = optionOf(n);
      if (!o) continue;
      if (!allowed.includes(o.key)) {
        const dm = didYouMean(o.key, allowed);
        this.err(SKETCH_CODES.unknownOption, `unknown option '${o.key}' for ${owner}`, dm ? `did you mean '${dm}'? (${owner} accepts: ${allowed.join(', ')})` : `${owner} accepts: ${allowed.join(', ')}`, o.keySpan);
        continue;
      }
      if (out.has(o.key)) {
        this.err(SKETCH_CODES.duplicate, `option '${o.key}' is given twice`, 'give each option once', o.keySpan);
        continue;
      }
      out.set(o.key, o);
    }
    return out;
  }

  /** `per=thread|warp|one`, or undefined after reporting E-option-value. */
  perOf(o: RawOption): Per | undefined {
    const v = o.value?.kind === 'expr' && o.value.e.k === 'name' && !o.value.e.index ? o.value.e.name : undefined;
    if (v === 'thread' || v === 'warp' || v === 'one') return v;
    this.err(SKETCH_CODES.optionValue, 'per must be thread, warp or one', 'per=thread: every thread performs it; per=warp: one thread per warp; per=one: one elected thread', o.value?.span ?? o.span);
    return undefined;
  }

  /** An option whose value is an integer expression over `scope`. */
  exprOption(o: RawOption, scope: Scope): Expr | undefined {
    if (!o.value || o.value.kind !== 'expr') {
      this.err(SKETCH_CODES.optionValue, `option '${o.key}' needs an integer expression`, `write ${o.key}=EXPR`, o.value?.span ?? o.span);
      return undefined;
    }
    return this.intExpr(o.value.e, scope);
  }

  /** The `[N]` of an array declaration (1 without it); at least 1 with the defaults. */
  lengthOf(n: CstNode, what: string): Expr | undefined {
    const len = node(n, 'arrayLen');
    if (!len) return { k: 'num', v: 1 };
    const se = exprOf(node(len, 'expr'));
    const e = this.intExpr(se, this.sizeScope(what));
    const v = this.evalDefault(e, this.sizeEnv, se.span);
    if (e && v !== undefined && v < 1) {
      this.err(SKETCH_CODES.optionValue, `${what} is ${v}; it needs at least 1`, 'arrays have at least one element', se.span);
      return undefined;
    }
    return e;
  }

  /** Converts an expression that must be an integer (no references) over `scope`. */
  intExpr(e: SExpr, scope: Scope): Expr | undefined {
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
          const arr = this.arrays.get(x.name);
          if (arr || x.index) {
            this.err(SKETCH_CODES.operandKind,
              arr ? `'${x.name}' is a ${arr.kind} array, not an integer` : `'${x.name}' is not an array and cannot be indexed`,
              arr ? `an integer is expected here; ${x.name}[i] can only be an operand of an operation that takes a ${arr.kind}` : 'only barrier and buffer arrays take [index]',
              x.span);
            ok = false;
            return undefined;
          }
          if (!scope.has(x.name)) {
            const known = BUILTIN_NAMES.includes(x.name) || this.paramNames.has(x.name);
            const dm = known ? undefined : didYouMean(x.name, scope.list());
            this.err(SKETCH_CODES.unknownName,
              known ? `'${x.name}' cannot be used in ${scope.what}` : `unknown name '${x.name}'`,
              dm ? `did you mean '${dm}'?` : scope.allowed,
              x.span);
            ok = false;
            return undefined;
          }
          return { k: 'var', name: x.name, loc: this.loc(x.span) };
        }
      }
    };
    const out = foldS(e, false, walk);
    return ok ? out : undefined;
  }

  /** An expression without names (literals only), for parameter defaults and role sizes. */
  plainExpr(e: SExpr): Expr | undefined {
    return foldS<Expr | undefined>(e, false, (x, [a, b]) => {
      switch (x.k) {
        case 'num': return { k: 'num', v: x.v };
        case 'un': return a ? { k: 'un', op: x.op, a } : undefined;
        case 'bin': return a && b ? { k: 'bin', op: x.op, a, b } : undefined;
        default: return undefined;
      }
    });
  }
}

/** The state of lowering one role's body: its variables, its scope and whether every statement lowered. */
export interface RoleLowering {
  readonly c: LowerCtx;
  readonly roleName: string;
  /** The CTA ranks the role runs in (with the defaults), for references to one-CTA buffers. */
  readonly ranks: number[] | undefined;
  /** Variables assigned so far in the role. */
  readonly vars: Set<string>;
  /** What the role's expressions may read. */
  readonly scope: Scope;
  /** False once any statement failed to lower. */
  ok: boolean;
  /** Depth of enclosing `elect:` blocks (their bodies run on one thread). */
  electDepth: number;
  /** The offset of each ranged buffer reference, for the check of offset + bytes against the element. */
  readonly offsetSpans: Map<BufRef, { span: Span; bytes?: number }>;
  /** Whether `name` may be assigned (not a parameter, builtin or array); reports E-assign otherwise. */
  assignable(name: string, span: Span): boolean;
}
