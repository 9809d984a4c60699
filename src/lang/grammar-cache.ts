/**
 * The sketch grammar's analysis, kept as data so that the parser need not redo it at every start.
 *
 * Chevrotain builds a parser's grammar (its GAST: rules, alternations, repetitions, terminals) by
 * running every rule once in a "recording" mode, and, for error recovery, computes the follow set
 * of every rule reference from it. Both depend only on the grammar in parser.ts, yet cost ~20 ms
 * of every `mbsim check` (cold code, and an object-copying constructor per production). They are
 * written once into grammar-data.ts ({@link freezeGrammar}, `node scripts/grammar-data.mjs` after
 * `npm run build`) and rebuilt from there ({@link thawRule}, {@link thawFollows}): the same objects
 * of the same classes with the same fields. test/lang-start.test.ts checks that the data is what
 * Chevrotain records and computes today, and that parses are unchanged.
 */
import {
  Alternation, Alternative, EOF, NonTerminal, Option, Repetition, RepetitionMandatory, RepetitionMandatoryWithSeparator,
  RepetitionWithSeparator, Rule, Terminal, type TokenType,
} from 'chevrotain';

/** A token type, by name. */
interface TokenRef {
  tok: string;
}
/** A field of a production: its name and value (`_definition`: the children). */
type Field = [string, string | number | boolean | TokenRef | FrozenProduction[]];
/** A production: the name of its class and its own fields, in order. */
export type FrozenProduction = [string, Field[]];
/** The frozen analysis: each rule's GAST, by rule name, and the follow sets by follow key. */
export interface FrozenGrammar {
  rules: Record<string, FrozenProduction>;
  follows: Record<string, string[]>;
}

type ProductionClass = { prototype: object; name: string };
const CLASSES: Record<string, ProductionClass> = {
  Rule, NonTerminal, Terminal, Alternative, Alternation, Option, Repetition, RepetitionMandatory,
  RepetitionMandatoryWithSeparator, RepetitionWithSeparator,
};

/** Fields with a token type as value. */
const TOKEN_FIELDS = new Set(['terminalType', 'separator']);

function className(p: object): string {
  for (const [name, cls] of Object.entries(CLASSES)) if (Object.getPrototypeOf(p) === cls.prototype) return name;
  throw new Error(`grammar-cache: unknown production class ${p.constructor.name}`);
}

/** One production as data (`referencedRule` is left out: Chevrotain resolves it by name). */
export function freezeProduction(p: object): FrozenProduction {
  const fields: Field[] = [];
  for (const [key, value] of Object.entries(p)) {
    if (key === 'referencedRule') continue;
    if (key === '_definition') fields.push([key, (value as object[]).map(freezeProduction)]);
    else if (TOKEN_FIELDS.has(key)) fields.push([key, { tok: (value as TokenType).name }]);
    else if (['string', 'number', 'boolean'].includes(typeof value)) fields.push([key, value as string | number | boolean]);
    else throw new Error(`grammar-cache: field ${key} of a ${className(p)} holds a ${typeof value}`);
  }
  return [className(p), fields];
}

/** A parser's recorded rules and follow sets as data. */
export function freezeGrammar(rules: Record<string, object>, follows: Record<string, TokenType[]>): FrozenGrammar {
  return {
    rules: Object.fromEntries(Object.entries(rules).map(([name, rule]) => [name, freezeProduction(rule)])),
    follows: Object.fromEntries(Object.entries(follows).map(([key, types]) => [key, types.map((t) => t.name)])),
  };
}

function tokenByName(tokens: Map<string, TokenType>, name: string): TokenType {
  const t = name === EOF.name ? EOF : tokens.get(name);
  if (!t) throw new Error(`grammar-cache: no token type ${name}`);
  return t;
}

/** Rebuilds a production from {@link freezeProduction}'s data; `tokens` maps names to token types. */
export function thawRule(frozen: FrozenProduction, tokens: Map<string, TokenType>): object {
  const [cls, fields] = frozen;
  const p = Object.create(CLASSES[cls]!.prototype) as Record<string, unknown>;
  for (const [key, value] of fields) {
    if (key === '_definition') p[key] = (value as FrozenProduction[]).map((c) => thawRule(c, tokens));
    else if (TOKEN_FIELDS.has(key)) p[key] = tokenByName(tokens, (value as TokenRef).tok);
    else p[key] = value;
  }
  return p;
}

/** Rebuilds the follow sets of {@link freezeGrammar}'s data. */
export function thawFollows(frozen: Record<string, string[]>, tokens: Map<string, TokenType>): Record<string, TokenType[]> {
  const follows: Record<string, TokenType[]> = {};
  for (const [key, names] of Object.entries(frozen)) follows[key] = names.map((n) => tokenByName(tokens, n));
  return follows;
}
