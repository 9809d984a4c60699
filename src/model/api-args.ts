/**
 * Argument checks of the library's public functions (src/index.ts): garbage given to one (null, a
 * number for an object, an object of the wrong shape) is a TypeError naming the function and the
 * argument, never an internal "Cannot read properties of undefined" from deep inside.
 */

/** What `v` is, in words, for a message ("null", "an array", "a number (NaN)", "a string"). */
export function argKind(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'number':
      return `a number (${v})`;
    case 'string':
      return `a string (${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)})`;
    case 'object':
      return 'an object of another shape';
    case 'function':
      return 'a function';
    default:
      return `a ${typeof v}`;
  }
}

/** Throws a TypeError `fn: name must be what, got …`. */
export function argError(fn: string, name: string, what: string, v: unknown): never {
  throw new TypeError(`${fn}: ${name} must be ${what}, got ${argKind(v)}`);
}

/** `v` is a non-null object (not an array) that has every key of `keys`. */
export function isRecord(v: unknown, keys: readonly string[] = []): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && keys.every((k) => k in v);
}

/**
 * Checks that `v` is an object (an options bag: undefined is allowed when `optional`) and, when
 * `keys` is given, that it names no other key: a misspelt or another function's option (`timeoutMs`
 * to `check`, whose bound is `timeout`) would otherwise be ignored, and its bound with it.
 */
export function objectArg(fn: string, name: string, v: unknown, optional = true, keys?: readonly string[]): void {
  if (optional && v === undefined) return;
  if (!isRecord(v)) argError(fn, name, optional ? 'an object (or left out)' : 'an object', v);
  if (keys) knownKeys(fn, name, v, keys);
}

/** Throws a TypeError for the first key of `v` not in `keys`, with the nearest known key as a hint. */
export function knownKeys(fn: string, name: string, v: Record<string, unknown>, keys: readonly string[]): void {
  for (const k of Object.keys(v)) {
    if (keys.includes(k)) continue;
    const near = nearest(k, keys);
    throw new TypeError(`${fn}: ${name} has no option ${JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}; its options are ${keys.join(', ')}`);
  }
}

/** The key of `keys` nearest to `k` (same word up to case and a unit suffix, or within 2 edits), if any. */
function nearest(k: string, keys: readonly string[]): string | undefined {
  const bare = (x: string) => x.toLowerCase().replace(/(ms|bytes|s)$/, '');
  const same = keys.find((c) => bare(c) === bare(k));
  if (same) return same;
  let best: string | undefined;
  let bestD = 3;
  for (const c of keys) {
    const d = editDistance(k.toLowerCase(), c.toLowerCase(), bestD);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best;
}

/** Levenshtein distance of `a` and `b`, or `cap` once it reaches it. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap || a.length > 64 || b.length > 64) return cap;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return Math.min(prev[b.length]!, cap);
}

/**
 * Checks that `v` is a plain object (a literal, `Object.create(null)`, or a Proxy of one): a Map or
 * an object whose names are inherited would be read as an empty bag, its entries silently unused.
 * Undefined is allowed when `optional`.
 */
export function plainObjectArg(fn: string, name: string, v: unknown, what: string, optional = true): void {
  if (optional && v === undefined) return;
  const proto = isRecord(v) ? Object.getPrototypeOf(v) as object | null : undefined;
  if (proto === undefined || (proto !== null && Object.getPrototypeOf(proto) !== null)) {
    const ctor = isRecord(v) && typeof v.constructor === 'function' && v.constructor !== Object ? v.constructor.name : '';
    const kind = v instanceof Map ? 'a Map' : proto ? `an object whose prototype is not Object.prototype${ctor ? ` (an instance of ${ctor})` : ''}` : argKind(v);
    throw new TypeError(`${fn}: ${name} must be ${what}, got ${kind}`);
  }
}

/** Checks that `v` is a Program (from `instantiate`). */
export function programArg(fn: string, v: unknown, name = 'program'): void {
  if (!isRecord(v) || !Array.isArray(v.agents) || !isRecord(v.kernel) || typeof v.barrierName !== 'function') argError(fn, name, 'a Program (from instantiate)', v);
}

/** Checks that `v` is an array (of `what`). */
export function arrayArg(fn: string, name: string, v: unknown, what = 'an array'): void {
  if (!Array.isArray(v)) argError(fn, name, what, v);
}

/** Checks that `v` is a string. */
export function stringArg(fn: string, name: string, v: unknown): void {
  if (typeof v !== 'string') argError(fn, name, 'a string', v);
}

/** Checks that `v` is a function. */
export function functionArg(fn: string, name: string, v: unknown): void {
  if (typeof v !== 'function') argError(fn, name, 'a function', v);
}

/**
 * Checks the range of a bound given to a library call (a number already, not NaN: the governor's
 * `boundOption` refuses the rest): positive, and a whole number when `whole`; Infinity is no bound.
 * Zero or less would stop the call before it starts, and a fraction of a count means nothing, so
 * either is a RangeError naming the option and the value, never a silent `incomplete`.
 */
export function positiveBound(fn: string, name: string, v: number | undefined, what: string, whole = false): void {
  if (v === undefined || v === Infinity) return;
  if (v > 0 && (!whole || Number.isInteger(v))) return;
  throw new RangeError(`${fn}: ${name} must be ${what} (Infinity for no bound), got ${v}`);
}
