/**
 * The kinds of the timing parameters (cycles, rates, counts, percentages, fractions, flags, the
 * clock), the values each kind admits and the error of a value outside them; src/sim/timing.ts
 * re-exports them and checks every timing with them.
 */
import type { Timing } from './timing.js';

/**
 * What values a parameter may take:
 * - `cycles`: a latency or cost, 0 ≤ v ≤ {@link MAX_CYCLES};
 * - `signed-cycles`: a difference of latencies, |v| ≤ {@link MAX_CYCLES};
 * - `rate`: bytes, FLOP or cycles per unit (a divisor), {@link MIN_RATE} ≤ v ≤ {@link MAX_RATE};
 * - `clock`: the SM clock in MHz, within {@link CLOCK_MHZ};
 * - `count`: a number of units (SMs), an integer 1 ≤ v ≤ 1,000,000;
 * - `percent`: 0 ≤ v ≤ 100;
 * - `fraction`: 0 ≤ v < 1;
 * - `flag`: 0 or 1.
 */
export type ParamKind = 'cycles' | 'signed-cycles' | 'rate' | 'count' | 'percent' | 'fraction' | 'flag' | 'clock';

/** Longest latency or cost a parameter may give (cycles; half a second at 2 GHz). */
export const MAX_CYCLES = 1e9;
/** Largest rate a parameter may give. */
export const MAX_RATE = 1e12;
/**
 * Smallest rate (bytes or FLOPs per cycle): at it a 16 KiB tile already takes 1.6e10 cycles, far
 * past any kernel; smaller rates (`1e-300`) only make simulated time overflow to infinity.
 */
export const MIN_RATE = 1e-6;
/** The SM clock's range in MHz (a GPU clock is hundreds to a few thousand MHz). */
export const CLOCK_MHZ = { min: 1, max: 100_000 } as const;

/**
 * The kind of every parameter that is not `cycles` (the default: a parameter missing here is a
 * latency or cost). A new rate, count, percentage, fraction or flag must be listed.
 */
export const PARAM_KINDS: Readonly<Partial<Record<keyof Timing, ParamKind>>> = {
  clockMHz: 'clock',
  tmaTensorExtra: 'signed-cycles',
  tmaSourceHbm: 'flag',
  tmaBytesPerCycleSm: 'rate',
  tmaL2DistinctBytesPerCycle: 'rate',
  tmaL2DistinctSharedBytesPerCycle: 'rate',
  tmaL2DistinctBytesPerCycleSm: 'rate',
  tmaBytesPerCycleAllSms: 'rate',
  tmaHbmBytesPerCycleSm: 'rate',
  tmaMcastBytesPerCycleAllSms: 'rate',
  tmaQueueMaxLoadPct: 'percent',
  tmaHbmStridedRowsPct: 'percent',
  tmaSharedTilePct: 'percent',
  bulkStoreHbm: 'flag',
  hbmWriteBytesPct: 'percent',
  sms: 'count',
  hbmBytesPerCycle: 'rate',
  tcgen05FlopsPerCycle: 'rate',
  wgmmaFlopsPerCycle: 'rate',
  stSharedBytesPerCycleWarp: 'rate',
  jitter: 'fraction',
};

/** The kind of parameter `name` (see {@link PARAM_KINDS}). */
export function paramKind(name: string): ParamKind {
  return Object.hasOwn(PARAM_KINDS, name) ? (PARAM_KINDS as Record<string, ParamKind>)[name]! : 'cycles';
}

const KIND_RULE: Record<ParamKind, { ok: (v: number) => boolean; what: string }> = {
  cycles: { ok: (v) => v >= 0 && v <= MAX_CYCLES, what: `a number of cycles from 0 to ${MAX_CYCLES.toExponential()}` },
  'signed-cycles': { ok: (v) => Math.abs(v) <= MAX_CYCLES, what: `a number of cycles from -${MAX_CYCLES.toExponential()} to ${MAX_CYCLES.toExponential()}` },
  rate: { ok: (v) => v >= MIN_RATE && v <= MAX_RATE, what: `a rate greater than 0 (from ${MIN_RATE.toExponential()} to ${MAX_RATE.toExponential()})` },
  clock: { ok: (v) => v >= CLOCK_MHZ.min && v <= CLOCK_MHZ.max, what: `a clock in MHz from ${CLOCK_MHZ.min} to ${CLOCK_MHZ.max.toLocaleString('en-US')}` },
  count: { ok: (v) => Number.isInteger(v) && v >= 1 && v <= 1e6, what: 'a whole number from 1 to 1,000,000' },
  percent: { ok: (v) => v >= 0 && v <= 100, what: 'a percentage from 0 to 100' },
  fraction: { ok: (v) => v >= 0 && v < 1, what: 'a fraction from 0 up to (not including) 1' },
  flag: { ok: (v) => v === 0 || v === 1, what: '0 or 1' },
};

/** Thrown for a timing override that names no parameter or gives a value outside its kind. */
export class TimingError extends Error {}

/**
 * A rejected value as a message shows it: its JSON, at most 40 characters. A value JSON cannot
 * write (nested past the stack, cyclic, a BigInt inside) is named by its type instead.
 */
export function shown(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'number' ? String(value) : JSON.stringify(value) ?? String(value);
  } catch {
    return Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value === 'object' ? 'an object' : typeof value;
  }
  return s.length > 40 ? `${s.slice(0, 40)}… (${s.length} characters)` : s;
}

/** Why `value` is not a valid value of parameter `name`, or null when it is. */
export function timingValueError(name: string, value: unknown): string | null {
  const rule = KIND_RULE[paramKind(name)];
  if (typeof value !== 'number' || !Number.isFinite(value)) return `timing parameter '${name}' must be ${rule.what}, got ${shown(value)}`;
  return rule.ok(value) ? null : `timing parameter '${name}' must be ${rule.what}, got ${value}`;
}
