/**
 * The PTX abstract syntax tree: plain data (JSON-serializable but for bigint immediates), one node
 * per directive, declaration, label, instruction and `{ }` scope, each with its source position.
 * Forms follow the PTX ISA (9.0) chapters "Syntax", "State Spaces, Types, and Variables",
 * "Directives" and "Instructions"; what nvcc 13 emits for production kernels is the target.
 *
 * Nothing here knows any opcode's meaning: an instruction is its opcode words and operands.
 */

/** Where a node starts: the file as given to the parser and a 1-based line and column. */
export interface SrcPos {
  file: string;
  line: number;
  col: number;
}

/** The call site of inlined code: `inlined_at file line col[, function_name LABEL[+N]]`. */
export interface InlinedAt {
  fileIndex: number;
  line: number;
  col: number;
  functionName?: { label: string; offset: number };
}

/** A `.loc file line col[, function_name SYM[+N], inlined_at file line col]` directive. */
export interface LocDirective {
  kind: 'loc';
  /** The `.file` index. */
  fileIndex: number;
  line: number;
  col: number;
  /** The `function_name` label (a `.debug_str` entry) and its offset, when given. */
  functionName?: { label: string; offset: number };
  /** The call site this code was inlined at, when given. */
  inlinedAt?: InlinedAt;
  pos: SrcPos;
}

/** A `.file N "path"[, timestamp, size]` directive. */
export interface FileDirective {
  kind: 'file';
  index: number;
  path: string;
  timestamp?: bigint;
  size?: bigint;
  pos: SrcPos;
}

/** An integer or symbol expression (initializers, operands with arithmetic). */
export type Expr =
  | { kind: 'int'; value: bigint; text: string }
  | { kind: 'float'; value: number; text: string }
  | { kind: 'sym'; name: string }
  | { kind: 'unary'; op: '-' | '~' | '!'; arg: Expr }
  | { kind: 'binary'; op: string; left: Expr; right: Expr }
  /** `generic(sym)`, `mask(...)` and other function-like forms. */
  | { kind: 'call'; fn: string; args: Expr[] };

/** An initializer: an expression or a braced list (nested for multi-dimensional arrays). */
export type Init = Expr | { kind: 'list'; items: Init[] };

/** A pointer attribute of a kernel parameter: `.ptr[.space][.align N]`. */
export interface PtrAttr {
  space?: string;
  align?: number;
}

/** One declared name: `x`, `%r<100>` (a range: `%r0` … `%r99`), `buf[4][8]`, `x = 1`. */
export interface DeclName {
  name: string;
  /** `<N>`: N numbered registers named `name0` … `name{N-1}`. */
  range?: number;
  /** Array dimensions; `null` for `[]` (size from the initializer or extern). */
  dims?: (number | null)[];
  init?: Init;
  pos: SrcPos;
}

/**
 * A variable or register declaration: `[linkage] .space [.align N] [.vN] .type [.ptr…] names;`
 * (`.reg .b32 %r<11>;`, `.extern .shared .align 16 .b8 smem[];`, `.global .f32 x = 0f3FC00000;`).
 */
export interface Decl {
  kind: 'decl';
  /** `.extern`, `.visible`, `.weak`, `.common` (in the order given). */
  linkage: string[];
  /** `.reg`, `.global`, `.const`, `.shared`, `.local`, `.param`, `.tex`, … (with `::` qualifiers). */
  space: string;
  align?: number;
  /** `.v2`, `.v4`, `.v8`. */
  vector?: string;
  /** `.b32`, `.pred`, `.b128`, `.f16x2`, … */
  type: string;
  ptr?: PtrAttr;
  /** `.attribute(.managed)` and similar, as written. */
  attributes?: string[];
  names: DeclName[];
  pos: SrcPos;
}

/** A parameter of an `.entry` or `.func` (one name each): `.param .align 128 .b8 P[N]`. */
export interface Param {
  space: string;
  align?: number;
  vector?: string;
  type: string;
  ptr?: PtrAttr;
  name: string;
  dims?: (number | null)[];
  pos: SrcPos;
}

/** An operand of an instruction. */
export type Operand =
  /** A register, special register (`%tid.x`), parameter, variable, label or function name. */
  | { kind: 'name'; name: string; pos: SrcPos }
  /** The sink `_`. */
  | { kind: 'sink'; pos: SrcPos }
  | { kind: 'int'; value: bigint; text: string; pos: SrcPos }
  | { kind: 'float'; value: number; text: string; pos: SrcPos }
  /** A constant or symbol expression that is not a single name or number (`sym+8`, `-(4*2)`). */
  | { kind: 'expr'; expr: Expr; pos: SrcPos }
  /** A dual destination `%r|%p`. */
  | { kind: 'pair'; first: string; second: string; pos: SrcPos }
  /** A vector operand `{%r1, %r2, …}` (items: names, sinks, immediates). */
  | { kind: 'vector'; items: Operand[]; pos: SrcPos }
  /**
   * An address `[base]`, `[base+off]`, `[base+-off]`, `[imm]`, with the offset folded; `rest`
   * holds the operands after the first (tensor coordinates: `[%rd1, {%r1, %r2}]`).
   */
  | { kind: 'address'; base?: string; offset: bigint; rest?: Operand[]; pos: SrcPos }
  /** A parenthesized list `(a, b)`: the return and argument lists of `call`. */
  | { kind: 'list'; items: Operand[]; pos: SrcPos };

/** A guard `@p` or `@!p`. */
export interface Guard {
  negated: boolean;
  pred: string;
}

/**
 * One instruction: `[@[!]p] opcode[.mod…] operands;`. The opcode is not checked against any
 * table: unknown opcodes are ordinary instructions, and the interpreter decides what they mean.
 */
export interface Instruction {
  kind: 'instr';
  guard?: Guard;
  /** The full opcode as written: `mbarrier.try_wait.parity.shared::cta.b64`. */
  opcode: string;
  /** The first word: `mbarrier`. */
  base: string;
  /** The modifiers without their dots: `['try_wait', 'parity', 'shared::cta', 'b64']`. */
  mods: string[];
  operands: Operand[];
  /** The last `.loc` before this instruction in the function (in text order), if any. */
  loc?: LocDirective;
  /** The column of the opcode when a guard precedes it (`@%p1 bra L`); else the opcode is at `pos`. */
  opcodeCol?: number;
  pos: SrcPos;
}

/** A label `NAME:` (its target is the next statement of its scope). */
export interface Label {
  kind: 'label';
  name: string;
  pos: SrcPos;
}

/** `.pragma "…"[, "…"];` */
export interface Pragma {
  kind: 'pragma';
  values: string[];
  pos: SrcPos;
}

/** `name: .callprototype [(.param …)] _ (params)[.noreturn];` */
export interface CallPrototype {
  kind: 'prototype';
  name: string;
  returns: Param[];
  params: Param[];
  noreturn: boolean;
  pos: SrcPos;
}

/** A directive the parser keeps as words only (inside bodies: `.maxnreg` and the like). */
export interface OtherDirective {
  kind: 'directive';
  name: string;
  args: string[];
  pos: SrcPos;
}

/** A statement of a function body or scope. */
export type Stmt = Instruction | Label | Decl | Block | LocDirective | Pragma | CallPrototype | OtherDirective;

/** A `{ … }` scope: its labels and registers are local to it (PTX ISA "Statements"). */
export interface Block {
  kind: 'block';
  stmts: Stmt[];
  pos: SrcPos;
}

/** A performance-tuning or cluster directive of a function header: `.maxntid 128, 1, 1`. */
export interface FuncDirective {
  name: string;
  args: number[];
  /** The strings of a `.pragma "…";` in the header. */
  values?: string[];
  pos: SrcPos;
}

/** An `.entry` (kernel) or `.func`, declared (`;`) or defined (`{ … }`). */
export interface Func {
  kind: 'function';
  entry: boolean;
  linkage: string[];
  name: string;
  /** `.func (.param .b32 r) name(…)`: the return parameters. */
  returns: Param[];
  params: Param[];
  /** `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`, `.explicitcluster`, `.reqnctapercluster`, `.maxclusterrank`, `.pragma`… */
  directives: FuncDirective[];
  noreturn: boolean;
  /** The body; absent for a declaration (`.extern .func vprintf(…);`). */
  body?: Block;
  pos: SrcPos;
}

/** An entry of a `.section` block: a label or a data directive with its values. */
export type SectionItem =
  | { kind: 'label'; name: string; pos: SrcPos }
  /**
   * `.b8 1, 2`, `.b64 $L__func_begin0`: the values as written, comma-separated (numbers, labels,
   * `label+4`, strings); `sectionValues` splits them.
   */
  | { kind: 'data'; type: string; text: string; pos: SrcPos };

/** `.section .debug_str { … }`: kept as data; nothing executes it. */
export interface Section {
  kind: 'section';
  name: string;
  items: SectionItem[];
  pos: SrcPos;
}

/** A module-level item, in source order. */
export type ModuleItem = Func | Decl | Section | FileDirective | Pragma | OtherDirective;

/** A parsed PTX module. */
export interface Module {
  kind: 'module';
  file: string;
  /** `.version`: e.g. `9.0`. */
  version?: string;
  /** `.target` words: `['sm_90a']`, `['sm_100a', 'texmode_independent']`. */
  targets: string[];
  addressSize?: number;
  items: ModuleItem[];
  pos: SrcPos;
}
