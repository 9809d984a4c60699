/**
 * Chevrotain grammar of the sketch language (a CST parser with error recovery). The grammar is
 * written out in docs/LANGUAGE.md; operations are parsed generically (mnemonic, operands,
 * `key=value` options) and checked against the operation table in `ops.ts` when lowering.
 */
import { CstParser, LLkLookaheadStrategy, type CstNode, type ILookaheadStrategy, type IOrAlt, type IToken } from 'chevrotain';
import {
  ALL_TOKENS, Assign, At, BinOp, Colon, Comma, Dedent, Ident, Indent, Int, KwBarrier, KwElect,
  KwElif, KwElse, KwFor, KwIf, KwIn, KwKernel, KwParam, KwPass, KwRange, KwRole, KwSmem, KwTmem,
  KwGmem, KwChoose, LBracket, LParen, Mnemonic, Newline, PrefixOp, RBracket, RParen, Shape,
  StringLit,
} from './tokens.js';
import { FrozenGrammarParser } from './frozen-parser.js';
import { GRAMMAR } from './grammar-data.js';
import { LIMITS } from './limits.js';
import { errorMessageProvider } from './parse-messages.js';

/** A rule of the grammar by name, for `SUBRULE` (the rules are methods Chevrotain adds). */
type RuleRef = (name: string) => (idx?: number) => CstNode;

/** Thrown once the parser has saved {@link LIMITS}.errors syntax errors: the rest is not parsed. */
class TooManyErrors extends Error {}

/**
 * Chevrotain's LL(k) lookahead with each decision's function built when the parser first reaches
 * that decision, not all of them when the parser is built: the same functions, but a small sketch
 * reaches few of the grammar's decisions, and building all of them was ~40% of the parser's start.
 */
function lazyLookahead(maxLookahead: number): ILookaheadStrategy {
  const llk = new LLkLookaheadStrategy({ maxLookahead });
  return {
    validate: (options) => llk.validate(options),
    buildLookaheadForAlternation(options) {
      let f: ((orAlts?: IOrAlt<unknown>[]) => number | undefined) | undefined;
      return function (this: unknown, orAlts?: IOrAlt<unknown>[]) {
        return (f ??= llk.buildLookaheadForAlternation(options)).call(this, orAlts);
      };
    },
    buildLookaheadForOptional(options) {
      let f: (() => boolean) | undefined;
      return function (this: unknown) {
        return (f ??= llk.buildLookaheadForOptional(options)).call(this);
      };
    },
  };
}

const saveError = (CstParser.prototype as unknown as { SAVE_ERROR(e: unknown): unknown }).SAVE_ERROR;

/** The grammar (exported for tests; `parseTokens` is the one way the front end parses). */
export class SketchParser extends FrozenGrammarParser {
  /** Chevrotain's hook for every syntax error: recovery stops after the error limit (it is what is slow on huge inputs). */
  SAVE_ERROR(error: unknown): unknown {
    const saved = saveError.call(this, error);
    // Errors are reported one per line (the rest are consequences): count the lines.
    const line = (error as { token?: IToken }).token?.startLine;
    if (line !== this.lastErrorLine) {
      this.lastErrorLine = line;
      if (++this.errorLines >= LIMITS.errors) throw new TooManyErrors();
    }
    return saved;
  }
  private lastErrorLine: number | undefined;
  private errorLines = 0;
  /** Starts a parse of `tokens`. */
  start(tokens: IToken[]): void {
    this.input = tokens;
    this.lastErrorLine = undefined;
    this.errorLines = 0;
  }

  /**
   * `reference`: Chevrotain's own analysis, the grammar recorded, the follow sets computed and every
   * lookahead function built now (tests compare the two). Otherwise the grammar and follow sets are
   * those of grammar-data.ts (when it holds exactly this grammar's rules) and each lookahead
   * function is built when first needed.
   */
  constructor(reference = false) {
    const eagerLookahead = reference;
    // The grammar is LL(2) (chevrotain's validations find no ambiguity at 2); the lookahead
    // functions cost ~40% less to build than at 3, and validations are skipped at run time.
    super(ALL_TOKENS, {
      recoveryEnabled: true, maxLookahead: 2, ...(eagerLookahead ? {} : { lookaheadStrategy: lazyLookahead(2) }),
      errorMessageProvider, nodeLocationTracking: 'none', skipValidations: true,
    });
    const $ = this as unknown as Record<string, (idx?: number) => CstNode>;
    const r: RuleRef = (name) => $[name]!;
    this.declRules(r);
    this.blockRules(r);
    this.branchRules(r);
    this.opRules(r);
    this.exprRules(r);
    this.analyse(reference ? undefined : GRAMMAR, ALL_TOKENS);
  }

  /** The declarations: file, kernel, param, barrier and buffer arrays, roles and their options. */
  private declRules(r: RuleRef): void {
    this.RULE('file', () => {
      this.MANY(() => this.SUBRULE(r('topItem')));
    });
    this.RULE('topItem', () => {
      this.OR([
        { ALT: () => this.SUBRULE(r('kernelDecl')) },
        { ALT: () => this.SUBRULE(r('paramDecl')) },
        { ALT: () => this.SUBRULE(r('barrierDecl')) },
        { ALT: () => this.SUBRULE(r('bufferDecl')) },
        { ALT: () => this.SUBRULE(r('roleDecl')) },
        { ALT: () => this.SUBRULE(r('stmt')) },
      ]);
    });
    this.RULE('kernelDecl', () => {
      this.CONSUME(KwKernel);
      this.OR([{ ALT: () => this.CONSUME(Ident) }, { ALT: () => this.CONSUME(StringLit, { LABEL: 'name' }) }]);
      this.MANY(() => this.SUBRULE(r('declOption')));
      this.CONSUME(Newline);
    });
    this.RULE('paramDecl', () => {
      this.CONSUME(KwParam);
      this.CONSUME(Ident);
      this.CONSUME(Assign);
      this.SUBRULE(r('expr'));
      this.CONSUME(Newline);
    });
    this.RULE('barrierDecl', () => {
      this.CONSUME(KwBarrier);
      this.CONSUME(Ident);
      this.OPTION(() => this.SUBRULE(r('arrayLen')));
      this.MANY(() => this.SUBRULE(r('declOption')));
      this.CONSUME(Newline);
    });
    this.RULE('bufferDecl', () => {
      this.OR([{ ALT: () => this.CONSUME(KwSmem) }, { ALT: () => this.CONSUME(KwTmem) }, { ALT: () => this.CONSUME(KwGmem) }]);
      this.CONSUME(Ident);
      this.OPTION(() => this.SUBRULE(r('arrayLen')));
      this.MANY(() => this.SUBRULE(r('declOption')));
      this.CONSUME(Newline);
    });
    this.RULE('arrayLen', () => {
      this.CONSUME(LBracket);
      this.SUBRULE(r('expr'));
      this.CONSUME(RBracket);
    });
    this.RULE('roleDecl', () => {
      this.CONSUME(KwRole);
      this.CONSUME(Ident);
      this.MANY(() => this.SUBRULE(r('declOption')));
      this.CONSUME(Colon);
      this.CONSUME(Newline);
      this.SUBRULE(r('block'));
    });
    this.RULE('declOption', () => {
      this.CONSUME(Ident);
      this.OPTION(() => {
        this.CONSUME(Assign);
        this.SUBRULE(r('optValue'));
      });
    });
    this.RULE('optValue', () => {
      this.OR([
        { ALT: () => this.CONSUME(Shape) },
        { ALT: () => this.CONSUME(StringLit) },
        { ALT: () => this.SUBRULE(r('expr')) },
      ]);
    });
  }

  /** Blocks, statements, loops and choices. */
  private blockRules(r: RuleRef): void {
    this.RULE('block', () => {
      this.CONSUME(Indent);
      this.MANY(() => this.SUBRULE(r('stmt')));
      this.CONSUME(Dedent);
    });
    this.RULE('stmt', () => {
      this.OR([
        { ALT: () => this.SUBRULE(r('forStmt')) },
        { ALT: () => this.SUBRULE(r('chooseStmt')) },
        { ALT: () => this.SUBRULE(r('ifStmt')) },
        { ALT: () => this.SUBRULE(r('electStmt')) },
        { ALT: () => this.SUBRULE(r('passStmt')) },
        { ALT: () => this.SUBRULE(r('simpleStmt')) },
      ]);
    });
    // The head `NAME in range(A` that for and choose share (after their keyword).
    const rangeHead = () => {
      this.CONSUME(Ident);
      this.CONSUME(KwIn);
      this.CONSUME(KwRange);
      this.CONSUME(LParen);
      this.SUBRULE(r('expr'));
    };
    this.RULE('forStmt', () => {
      this.CONSUME(KwFor);
      rangeHead();
      this.OPTION(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(r('expr'));
        this.OPTION2(() => {
          this.CONSUME2(Comma);
          this.SUBRULE3(r('expr'));
        });
      });
      this.CONSUME(RParen);
      this.CONSUME(Colon);
      this.CONSUME(Newline);
      this.SUBRULE(r('block'));
    });
    // `choose NAME in range(A[, B])`: a nondeterministic value (machine/ops/values.ts).
    this.RULE('chooseStmt', () => {
      this.CONSUME(KwChoose);
      rangeHead();
      this.OPTION(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(r('expr'));
      });
      this.CONSUME(RParen);
      this.CONSUME(Newline);
    });
  }

  /** if / elif / else, elect and pass. */
  private branchRules(r: RuleRef): void {
    this.RULE('ifStmt', () => {
      this.CONSUME(KwIf);
      this.SUBRULE(r('expr'));
      this.CONSUME(Colon);
      this.CONSUME(Newline);
      this.SUBRULE(r('block'));
      this.MANY(() => this.SUBRULE(r('elifClause')));
      this.OPTION(() => this.SUBRULE(r('elseClause')));
    });
    this.RULE('elifClause', () => {
      this.CONSUME(KwElif);
      this.SUBRULE(r('expr'));
      this.CONSUME(Colon);
      this.CONSUME(Newline);
      this.SUBRULE(r('block'));
    });
    this.RULE('elseClause', () => {
      this.CONSUME(KwElse);
      this.CONSUME(Colon);
      this.CONSUME(Newline);
      this.SUBRULE(r('block'));
    });
    this.RULE('electStmt', () => {
      this.CONSUME(KwElect);
      this.CONSUME(Colon);
      this.CONSUME(Newline);
      this.SUBRULE(r('block'));
    });
    this.RULE('passStmt', () => {
      this.CONSUME(KwPass);
      this.CONSUME(Newline);
    });
  }

  /** Simple statements: assignments and operations with their operands and options. */
  private opRules(r: RuleRef): void {
    this.RULE('simpleStmt', () => {
      this.OR([
        {
          GATE: () => this.LA(2).tokenType === Assign,
          ALT: () => {
            this.CONSUME(Ident, { LABEL: 'dest' });
            this.CONSUME(Assign);
            this.SUBRULE(r('assignValue'));
          },
        },
        {
          ALT: () => {
            this.OR2([
              { ALT: () => this.CONSUME(Mnemonic) },
              { ALT: () => this.CONSUME2(Ident) },
            ]);
            this.SUBRULE(r('opArgs'));
          },
        },
      ]);
      this.CONSUME(Newline);
    });
    this.RULE('assignValue', () => {
      this.OR([
        {
          ALT: () => {
            this.CONSUME(Mnemonic);
            this.SUBRULE(r('opArgs'));
          },
        },
        { ALT: () => this.SUBRULE(r('expr')) },
      ]);
    });
    this.RULE('opArgs', () => {
      this.OPTION(() => {
        this.SUBRULE(r('opArg'));
        this.MANY(() => {
          this.OR([
            {
              ALT: () => {
                this.CONSUME(Comma);
                this.SUBRULE2(r('opArg'));
              },
            },
            { ALT: () => this.SUBRULE(r('opOption')) },
          ]);
        });
      });
    });
    this.RULE('opArg', () => {
      this.OR([
        { ALT: () => this.SUBRULE(r('opOption')) },
        { ALT: () => this.SUBRULE(r('operand')) },
      ]);
    });
    this.RULE('opOption', () => {
      this.CONSUME(Ident);
      this.CONSUME(Assign);
      this.SUBRULE(r('optValue'));
    });
    this.RULE('operand', () => {
      this.SUBRULE(r('expr'));
      this.OPTION(() => {
        this.CONSUME(At);
        this.SUBRULE(r('unaryExpr'));
      });
    });

    // A flat chain `operand (op operand)*`: the precedence levels (docs/LANGUAGE.md §2) are applied
    // when lowering, with a loop, so that neither the parser nor the lowering recurses per level.
  }

  /** Expressions: binary operators, unary operators, primaries. */
  private exprRules(r: RuleRef): void {
    this.RULE('expr', () => {
      this.SUBRULE(r('unaryExpr'), { LABEL: 'operand' });
      this.MANY(() => {
        this.CONSUME(BinOp, { LABEL: 'op' });
        this.SUBRULE2(r('unaryExpr'), { LABEL: 'operand' });
      });
    });
    this.RULE('unaryExpr', () => {
      this.OR([
        {
          ALT: () => {
            this.CONSUME(PrefixOp, { LABEL: 'op' });
            this.SUBRULE(r('unaryExpr'));
          },
        },
        { ALT: () => this.SUBRULE(r('primary')) },
      ]);
    });
    this.RULE('primary', () => {
      this.OR([
        { ALT: () => this.CONSUME(Int) },
        {
          ALT: () => {
            this.CONSUME(Ident);
            this.OPTION(() => {
              this.CONSUME(LBracket);
              this.SUBRULE(r('expr'));
              this.CONSUME(RBracket);
            });
          },
        },
        {
          ALT: () => {
            this.CONSUME(LParen);
            this.SUBRULE2(r('expr'));
            this.CONSUME(RParen);
          },
        },
      ]);
    });
  }
}

let parser: SketchParser | undefined;

/**
 * Parses a token stream (from `lex`) into a CST; syntax errors are returned, not thrown. After
 * {@link LIMITS}.errors errors the parse stops: `cst` is then absent and `stopped` set.
 */
export function parseTokens(tokens: IToken[]): { cst?: CstNode; errors: { message: string; token: IToken }[]; stopped?: boolean } {
  parser ??= new SketchParser();
  parser.start(tokens);
  let cst: CstNode | undefined;
  let stopped = false;
  try {
    cst = (parser as unknown as { file: () => CstNode }).file();
  } catch (err) {
    if (!(err instanceof TooManyErrors)) throw err;
    stopped = true;
  }
  const errors = parser.errors.map((e) => ({ message: e.message, token: e.token }));
  parser.input = []; // release the tokens
  return stopped ? { errors, stopped } : { cst: cst!, errors };
}

