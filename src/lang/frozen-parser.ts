/**
 * A Chevrotain CST parser that can be built from a frozen grammar (grammar-cache.ts) instead of
 * recording its rules and computing its follow sets at every start, and that then makes a rule's
 * lookahead functions only when a parse first needs one. SketchParser (parser.ts) extends it; with
 * no frozen grammar, or one that does not hold exactly the parser's rules, everything is Chevrotain's own.
 */
import { CstParser, type TokenType } from 'chevrotain';
import { thawFollows, thawRule, type FrozenGrammar } from './grammar-cache.js';

/** Chevrotain's own methods that {@link FrozenGrammarParser} overrides. */
const chevrotain = CstParser.prototype as unknown as {
  topLevelRuleRecord(name: string, def: () => void): unknown;
  enableRecording(): void;
  disableRecording(): void;
  preComputeLookaheadFunctions(rules: { name: string }[]): void;
};

/** The parts of Chevrotain's parser state that the overrides read or set. */
interface ParserState {
  definedRulesNames: string[];
  recoveryEnabled: boolean;
  lookAheadFuncsCache: Map<number, unknown>;
  shortRuleNameToFull: Record<number, string>;
}

/** A CstParser analysed from a frozen grammar when it can be ({@link analyse}). */
export class FrozenGrammarParser extends CstParser {
  /** The frozen analysis this parser is built from (undefined: Chevrotain's own). */
  protected frozen: FrozenGrammar | undefined;
  /** The token types by name (the frozen grammar names them). */
  private tokensByName: Map<string, TokenType> | undefined;
  /** The rules whose lookahead functions are not made yet, by name (built from the frozen grammar). */
  private lazyRules: Map<string, { name: string }> | undefined;

  /**
   * Chevrotain's `performSelfAnalysis`, from `grammar` when it holds exactly the rules defined so
   * far, in order (call it once, after the last RULE). Chevrotain computes the follow sets only for
   * a parser that recovers from errors: that is off while it analyses, and the follow sets are
   * taken from the frozen grammar when the first recovery asks for them.
   */
  protected analyse(grammar: FrozenGrammar | undefined, tokens: TokenType[]): void {
    const self = this as unknown as ParserState;
    const names = grammar ? Object.keys(grammar.rules) : [];
    if (!grammar || names.length !== self.definedRulesNames.length || !self.definedRulesNames.every((n, i) => names[i] === n)) {
      this.performSelfAnalysis();
      return;
    }
    this.frozen = grammar;
    this.tokensByName = new Map(tokens.map((t) => [t.name, t]));
    const recovery = self.recoveryEnabled;
    self.recoveryEnabled = false;
    try {
      this.performSelfAnalysis();
    } finally {
      self.recoveryEnabled = recovery;
    }
    let follows: unknown;
    Object.defineProperty(this, 'resyncFollows', { configurable: true, enumerable: true, get: () => (follows ??= thawFollows(grammar.follows, this.tokensByName!)) });
  }

  /** Chevrotain's hook that records a rule's GAST by running it: the frozen rule instead. */
  topLevelRuleRecord(name: string, def: () => void): unknown {
    const frozen = this.frozen?.rules[name];
    return frozen ? thawRule(frozen, this.tokensByName!) : chevrotain.topLevelRuleRecord.call(this, name, def);
  }

  /**
   * Chevrotain's switch into recording mode (the DSL methods replaced on the instance) and back
   * (deleting them again, ~5 ms: the instance drops to slow properties): nothing is recorded from
   * the frozen grammar, so neither is needed.
   */
  enableRecording(): void {
    if (!this.frozen) chevrotain.enableRecording.call(this);
  }
  /** See {@link enableRecording}. */
  disableRecording(): void {
    if (!this.frozen) chevrotain.disableRecording.call(this);
  }

  /**
   * Chevrotain makes every decision's lookahead function for every rule when the parser is built:
   * from the frozen grammar, a rule's are made when the parser first asks for one of them
   * ({@link getLaFuncFromCache}).
   */
  preComputeLookaheadFunctions(rules: { name: string }[]): void {
    if (!this.frozen) return chevrotain.preComputeLookaheadFunctions.call(this, rules);
    this.lazyRules = new Map(rules.map((r) => [r.name, r]));
  }

  /** The lookahead function of decision `key` (its rule's short name in the bits above the low 12). */
  getLaFuncFromCache(key: number): unknown {
    const self = this as unknown as ParserState;
    const f = self.lookAheadFuncsCache.get(key);
    if (f !== undefined || !this.lazyRules) return f;
    const name = self.shortRuleNameToFull[key & ~0xfff];
    const rule = name === undefined ? undefined : this.lazyRules.get(name);
    if (!rule) return f;
    this.lazyRules.delete(name!);
    chevrotain.preComputeLookaheadFunctions.call(this, [rule]);
    return self.lookAheadFuncsCache.get(key);
  }
}
