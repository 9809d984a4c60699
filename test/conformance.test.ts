/**
 * Hardware conformance: replays every operation sequence recorded on a real H200
 * (`conformance/h200/*.json`, recorded by `hw/probes/conformance.cu` through `hw/run.sh`) on the
 * mbarrier model and compares every observable: arrive tokens (upper 32 bits), wait results,
 * pending_count, the word written back by `mbarrier.inval`, and after every step, for every live
 * barrier of every CTA, `test_wait.parity(0)`, `test_wait.parity(1)` and the state's upper 32 bits.
 * Schema: docs/HARDWARE.md, "Conformance vectors".
 *
 * Bulk copies are replayed as one `completeTx(bytes)` per destination CTA (the model's default
 * chunking); tensor-map copies as one `completeTx` of the whole box (the H200 credits the full box
 * bytes even for boxes partly or entirely out of bounds); the probe lets each copy land completely
 * before it observes.
 * Steps where the H200 trapped must return TRAP with a trapping diagnostic; undefined-but-
 * non-trapping cases must leave the diagnostic listed in EXPECTED_DIAGS.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  TRAP, arrive, arriveEach, completeTx, expectTx, init, inval, newBarrier, pendingCount, testParity, testToken,
  type MBarrier, type Token,
} from '../src/model/mbarrier.js';
import { encodeWord, tokenWord } from '../src/model/encoding.js';
import type { Diagnostic } from '../src/model/diagnostics.js';

const here = dirname(fileURLToPath(import.meta.url));
const vectorDir = join(here, '..', 'conformance', 'h200');

interface BarrierObs { parity0: boolean; parity1: boolean; hi?: string }
interface Observed {
  trap?: boolean;
  error?: string;
  token?: string;
  result?: boolean | number;
  word?: string;
  lane_tokens?: string[];
  data_ok?: Record<string, boolean>;
  state?: Record<string, BarrierObs>;
}
interface Step {
  op: string;
  cta: number;
  bar: number;
  target?: number;
  count?: number;
  tx?: number;
  parity?: number;
  token_step?: number;
  bytes?: number;
  multicast_mask?: number;
  threads?: number;
  observed: Observed;
}
interface Sequence { name: string; cta_count: number; state_probe?: boolean; error?: string; second_run_differs?: boolean; steps: Step[] }
interface VectorFile { probe: string; gpu: string; driver: string; nvcc: string; sequences: Sequence[] }

export interface Mismatch { step: number; op: string; what: string; hw: unknown; model: unknown }

/**
 * Disagreements between the H200 and the model that are known and reported (docs/HARDWARE.md,
 * "Disagreements"): `step` is the first step at which the model disagrees (later steps may diverge
 * as a consequence). Each entry must still occur: when the model is fixed, delete the entry.
 */
const KNOWN_DISAGREEMENTS: Record<string, { step: number; why: string }> = {
};

/** Undefined or suspicious cases the model must diagnose (without a trap) in these vectors. */
const EXPECTED_DIAGS: Record<string, string[]> = {
  init_count0_ub: ['count-range'],
  complete_first_negative_then_expect: ['expect-tx-completes'],
  tx_max_plus_2pow20_accepted: ['tx-range'],
  inval_word_with_tx_fields: ['tx-range'],
  token_waits_incl_stale_phases0to5: ['stale-token'],
  nocomplete_that_completes_ub: ['nocomplete-completes'],
  arrive_drop_to_zero_then_arrive_traps: ['drop-to-zero'],
  arrive_drop_to_zero_probe_completes_phase: ['drop-to-zero', 'count-range'],
  pending_count_nocomplete_tokens_c5: ['pending-count-token'],
};

const hex32 = (n: number): string => '0x' + (n >>> 0).toString(16).padStart(8, '0');
const hex64 = (n: bigint): string => '0x' + BigInt.asUintN(64, n).toString(16).padStart(16, '0');
const hiOf = (b: MBarrier): string => hex32(Number(encodeWord(b) >> 32n));

/** Replays one sequence on the model; returns every disagreement and the diagnostics raised. */
export function replay(seq: Sequence): { mismatches: Mismatch[]; diags: Diagnostic[] } {
  const bars = new Map<string, MBarrier>();
  const tokens = new Map<number, Token>();
  const mismatches: Mismatch[] = [];
  const allDiags: Diagnostic[] = [];
  const barrier = (cta: number, bar: number): MBarrier => {
    const k = `${cta}:${bar}`;
    let b = bars.get(k);
    if (!b) { b = newBarrier(); bars.set(k, b); }
    return b;
  };
  const idOf = (cta: number, bar: number) => cta * 16 + bar;

  for (let i = 0; i < seq.steps.length; i++) {
    const s = seq.steps[i]!;
    const obs = s.observed;
    const tgt = s.target ?? s.cta;
    const b = barrier(tgt, s.bar);
    const diags: Diagnostic[] = [];
    const miss = (what: string, hw: unknown, model: unknown) => mismatches.push({ step: i, op: s.op, what, hw, model });
    const before = { ...b };
    let r = 0;
    let result: boolean | number | undefined;
    let token: Token | undefined;
    const local = tgt === s.cta;
    const newToken = (): Token => ({ barrier: idOf(tgt, s.bar), phase: 0, pendingBefore: 0, txBefore: 0, noComplete: false });
    switch (s.op) {
      case 'init': r = init(b, s.count!, diags); break;
      case 'inval': r = inval(b, diags); break;
      case 'arrive':
        token = local ? newToken() : undefined;
        r = arrive(b, s.count ?? 1, {}, diags, token);
        break;
      case 'arrive.expect_tx':
        token = local ? newToken() : undefined;
        r = arrive(b, 1, { expectTx: s.tx! }, diags, token);
        break;
      case 'arrive_drop':
        token = newToken();
        r = arrive(b, s.count ?? 1, { drop: true }, diags, token);
        break;
      case 'arrive_drop.expect_tx':
        token = newToken();
        r = arrive(b, 1, { drop: true, expectTx: s.tx! }, diags, token);
        break;
      case 'arrive.noComplete':
        token = newToken();
        r = arrive(b, s.count!, { noComplete: true }, diags, token);
        break;
      case 'arrive.threads': // n lanes of one warp execute one arrive instruction: ONE arrive of the summed count
        r = arrive(b, s.threads! * (s.count ?? 1), {}, diags);
        break;
      case 'arrive.warps': // lane 0 of n warps each execute one arrive (separate instructions)
        r = arriveEach(b, s.threads!, s.count ?? 1, {}, diags);
        break;
      case 'expect_tx': r = expectTx(b, s.tx!, diags); break;
      case 'complete_tx': r = completeTx(b, s.tx!, diags); break;
      case 'test_wait.parity':
      case 'try_wait.parity':
        result = testParity(b, s.parity!);
        break;
      case 'test_wait.token':
      case 'try_wait.token':
        result = testToken(b, idOf(tgt, s.bar), tokens.get(s.token_step!)!, diags);
        break;
      case 'pending_count': result = pendingCount(tokens.get(s.token_step!)!, diags); break;
      case 'tensor_copy': // cp.async.bulk.tensor: credits the whole box, also where it lies out of bounds
        if (completeTx(barrier(s.cta, s.bar), s.bytes!, diags) === TRAP) r = TRAP;
        break;
      case 'bulk_copy': {
        const dests = s.multicast_mask ? [0, 1, 2, 3, 4, 5, 6, 7].filter((c) => (s.multicast_mask! >> c) & 1) : [s.cta];
        for (const c of dests) {
          const rr = completeTx(barrier(c, s.bar), s.bytes!, diags);
          if (rr === TRAP) r = TRAP;
        }
        break;
      }
      default:
        throw new Error(`${seq.name} step ${i}: unknown op ${s.op}`);
    }
    allDiags.push(...diags);
    if (token) tokens.set(i, token);

    if (obs.trap) {
      if (r !== TRAP) miss('trap', true, r);
      else if (!diags.some((d) => d.trap)) miss('trap-diagnostic', true, diags.map((d) => d.code));
      break; // the kernel is gone: nothing after a trap
    }
    if (r === TRAP) { miss('trap', false, diags.map((d) => d.code)); break; }

    if (obs.token !== undefined) {
      if (!token) miss('token', obs.token, 'no token');
      else if (tokenWord(token) >>> 0 !== Number(BigInt(obs.token))) miss('token', obs.token, hex32(tokenWord(token)));
    }
    if (obs.result !== undefined && obs.result !== result) miss('result', obs.result, result);
    if (obs.word !== undefined) {
      const w = hex64(encodeWord(before));
      if (w !== obs.word) miss('word', obs.word, w);
    }
    if (obs.lane_tokens && s.op === 'arrive.threads') {
      // one instruction: every lane receives the state before the (warp-aggregated) arrive
      const pre = hiOf(before);
      for (const t of obs.lane_tokens) if (t !== pre) miss('lane_token', t, pre);
    }
    if (obs.lane_tokens && s.op === 'arrive.warps') {
      // separate instructions in some order: the tokens (sorted) are the states before each arrive
      const sim = { ...before };
      const expected: string[] = [];
      for (let k = 0; k < s.threads!; k++) { expected.push(hiOf(sim)); arrive(sim, 1); }
      if ([...obs.lane_tokens].sort().join() !== expected.sort().join()) miss('lane_tokens', obs.lane_tokens, expected);
    }
    if (obs.data_ok) for (const [c, ok] of Object.entries(obs.data_ok)) if (!ok) miss(`data_ok ${c}`, ok, true);
    if (obs.state) {
      const live = [...bars.entries()].filter(([, v]) => v.status === 'valid').map(([k]) => k).sort();
      const seen = Object.keys(obs.state).sort();
      if (live.join(',') !== seen.join(',')) miss('live barriers', seen, live);
      for (const [k, o] of Object.entries(obs.state)) {
        const mb = bars.get(k);
        if (!mb) continue;
        if (testParity(mb, 0) !== o.parity0) miss(`${k} parity0`, o.parity0, testParity(mb, 0));
        if (testParity(mb, 1) !== o.parity1) miss(`${k} parity1`, o.parity1, testParity(mb, 1));
        if (o.hi !== undefined && hiOf(mb) !== o.hi) miss(`${k} hi`, o.hi, hiOf(mb));
      }
    }
  }
  return { mismatches, diags: allDiags };
}

const files = readdirSync(vectorDir).filter((f) => f.endsWith('.json')).sort();

describe('H200 conformance vectors', () => {
  it('has vectors', () => {
    expect(files.length).toBeGreaterThan(0);
  });
  for (const f of files) {
    const doc = JSON.parse(readFileSync(join(vectorDir, f), 'utf8')) as VectorFile;
    describe(`${f} (${doc.gpu}, driver ${doc.driver}, ${doc.nvcc})`, () => {
      it('names its probe', () => {
        expect(doc.probe).toMatch(/^hw\/probes\/.+\.cu$/);
        expect(doc.sequences.length).toBeGreaterThan(0);
      });
      for (const seq of doc.sequences) {
        it(seq.name, () => {
          expect(seq.second_run_differs ?? false, 'hardware gave different results on two runs').toBe(false);
          const { mismatches, diags } = replay(seq);
          const known = KNOWN_DISAGREEMENTS[seq.name];
          if (!known) expect(mismatches, `disagreements in ${seq.name}`).toEqual([]);
          else {
            expect(mismatches.length, `known disagreement in ${seq.name} no longer occurs: remove it from KNOWN_DISAGREEMENTS`).toBeGreaterThan(0);
            expect(mismatches[0]!.step, `first disagreement in ${seq.name}: ${JSON.stringify(mismatches[0])}`).toBe(known.step);
          }
          const codes = new Set(diags.map((d) => d.code));
          for (const c of EXPECTED_DIAGS[seq.name] ?? []) expect(codes.has(c as Diagnostic['code']), `diagnostic ${c}`).toBe(true);
          // a sequence that ended in a trap ends with the trapping step
          if (seq.error) expect(seq.steps[seq.steps.length - 1]!.observed.trap).toBe(true);
        });
      }
    });
  }
  it('every known disagreement names a recorded vector', () => {
    const names = new Set(files.flatMap((f) => (JSON.parse(readFileSync(join(vectorDir, f), 'utf8')) as VectorFile).sequences.map((s) => s.name)));
    for (const n of [...Object.keys(KNOWN_DISAGREEMENTS), ...Object.keys(EXPECTED_DIAGS)]) expect(names.has(n), n).toBe(true);
  });
});
