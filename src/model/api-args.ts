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

/** Checks that `v` is an object (an options bag: undefined is allowed when `optional`). */
export function objectArg(fn: string, name: string, v: unknown, optional = true): void {
  if (optional && v === undefined) return;
  if (!isRecord(v)) argError(fn, name, optional ? 'an object (or left out)' : 'an object', v);
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
