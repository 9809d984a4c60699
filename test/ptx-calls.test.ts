// `call` of a non-inlined `.func` (nvcc's `__noinline__`): inlined at translation, its
// parameters and return value through the call site's `.param` variables, `ret` back to the
// caller; recursion and chains deeper than MAX_INLINE_DEPTH refused at the call's file:line:col.
// nvcc's PTX of `noinline.cu` and its planted twin, and hand-written snippets.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { main } from '../src/cli/main.js';
import { instantiate, KernelError } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { MAX_INLINE_DEPTH } from '../src/ptxi/flat.js';
import { simulate } from '../src/sim/simulate.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}
function program(src: string, file: string, launch: PtxLaunch) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
const fixture = (f: string, launch: PtxLaunch) => program(readFileSync(`test/fixtures/ptx/${f}`, 'utf8'), f, launch);
const PIPE: PtxLaunch = { kernel: 'noinline', block: 128, params: { param_2: 4 }, tensorMaps: { param_0: 16384 } };

describe('noinline.cu: a TMA ring whose producer and consumer steps are __noinline__ functions', () => {
  it('simulates and checks OK: the loads by warp 0 inside produce(), 32 arrivals a consumer warp inside consume(), no warning', () => {
    const p = fixture('noinline.ptx', PIPE);
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    const arr = (s.events ?? []).flatMap((e) => (e.e === 'arrive' && e.agent >= 0 ? [`${p.agents[e.agent]!.name} ${e.loc?.line} ${e.count}`] : []));
    // line 106: produce()'s arrive.expect_tx (its .func body), line 179: consume()'s release.
    expect(new Set(arr)).toEqual(new Set(['noinline.w0 106 1', 'noinline.w1 179 32', 'noinline.w2 179 32', 'noinline.w3 179 32']));
    expect(arr.length).toBe(4 + 3 * 4);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
    // Each call site is its own copy of the body; a line some copy runs is not "never executed".
    expect(r.warnings).toEqual([]);
  });

  it('-DBUG=1 (consume() releases the stage before its read): a race at the read in the .func, with the CUDA line', async () => {
    const r = check(fixture('planted/noinline.bug1.ptx', PIPE), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    const c = await cli(['check', 'test/fixtures/ptx/planted/noinline.bug1.ptx']);
    expect(c.code).toBe(1);
    expect(c.out).toContain('RACE on buffer buf[0]');
    expect(c.out).toContain('read by noinline.w1 (line 180)');
    expect(c.out).toContain('noinline.bug1.ptx:180 (noinline.cu:35)');
    // The fix is where the release goes, not the count (the count, 96 from mbarrier.init, is right).
    expect(r.hazards[0]!.race!.fix).toMatch(/^move the release after the access: noinline\.w1 arrives on empty\[0\] \(line 175, from noinline\.cu:34\) before its read of buf\[0\] \(line 180, from noinline\.cu:35\)/);
  });
});

describe('recursion and depth', () => {
  it('a recursive .func (fib calls itself) is refused at the call, file:line:col, exit 2', async () => {
    const src = readFileSync('test/fixtures/ptx/noinline.ptx', 'utf8');
    const r = parsePtx(src, 'noinline.ptx');
    if (!r.ok) throw new Error('parse');
    let err: unknown;
    try {
      translatePtx(r.module, { kernel: 'recursive', block: 32, params: { param_1: 5 } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KernelError);
    expect((err as KernelError).message).toBe('call _Z3fibPii: a recursive call (_Z3fibPii → _Z3fibPii): mbsim inlines .func calls, recursion is not modelled');
    expect((err as KernelError).loc).toMatchObject({ file: 'noinline.ptx', line: 231, col: 2 });
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-calls-'));
    const f = join(dir, 'rec.ptx');
    writeFileSync(f, src);
    const c = await cli(['check', f, '--kernel', 'recursive', '--block', '32', '--param', 'param_1=5']);
    expect(c.code).toBe(2);
    expect(c.err).toContain(`${f}:231:2: error[ptx-call]: call _Z3fibPii: a recursive call`);
    expect(c.err).toContain('call.uni (retval0),');
    // The other kernel of the file, which never calls fib, translates.
    expect(() => translatePtx(r.module, PIPE)).not.toThrow();
  });

  const head = '.version 9.0\n.target sm_90a\n.address_size 64\n';
  const chain = (n: number) => {
    let out = head;
    out += '.func (.param .b32 r) f0(.param .b32 a)\n{\n.reg .b32 %r<3>;\nld.param.b32 %r1, [a];\nadd.s32 %r2, %r1, 1;\nst.param.b32 [r], %r2;\nret;\n}\n';
    for (let i = 1; i < n; i++) out += `.func (.param .b32 r) f${i}(.param .b32 a)\n{\n.reg .b32 %r<3>;\nld.param.b32 %r1, [a];\nadd.s32 %r1, %r1, 1;\n{\n.param .b32 p0;\nst.param.b32 [p0], %r1;\n.param .b32 q0;\ncall.uni (q0), f${i - 1}, (p0);\nld.param.b32 %r2, [q0];\n}\nst.param.b32 [r], %r2;\nret;\n}\n`;
    out += `.visible .entry k()\n.reqntid 32, 1, 1\n{\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n.shared .align 8 .b8 bar[8];\nmov.u32 %r1, bar;\n{\n.param .b32 p0;\nst.param.b32 [p0], 0;\n.param .b32 q0;\ncall.uni (q0), f${n - 1}, (p0);\nld.param.b32 %r2, [q0];\n}\nmbarrier.init.shared.b64 [%r1], %r2;\nmbarrier.arrive.shared.b64 _, [%r1];\nret;\n}\n`;
    return out;
  };

  it(`a chain of ${MAX_INLINE_DEPTH} nested calls is inlined (the return value reaches the barrier count); one more is refused`, () => {
    const p = program(chain(MAX_INLINE_DEPTH), 'chain.ptx', {});
    const s = simulate(p);
    // The count is the chain's depth (each level adds 1): one arrive of 32 threads against init(16) is an over-arrival.
    expect(s.verdict).not.toBe('ok');
    expect(s.diagnostics[0]!.diag.message).toContain('but only 16 of 16 arrivals are pending');
    const ok = simulate(program(chain(MAX_INLINE_DEPTH).replace('mbarrier.arrive.shared.b64 _, [%r1];', 'elect.sync %r3|%p1, -1;\n@%p1 mbarrier.arrive.shared.b64 _, [%r1];').replace('mbarrier.init.shared.b64 [%r1], %r2;', 'sub.s32 %r2, %r2, 15;\nmbarrier.init.shared.b64 [%r1], %r2;'), 'chain.ptx', {}));
    expect(ok.verdict).toBe('ok');
    expect(() => program(chain(MAX_INLINE_DEPTH + 1), 'chain.ptx', {})).toThrow(/calls nested more than 16 deep \(f16 → f15 → .* → f0\)/);
  });
});

describe('hand-written calls', () => {
  const mod = (fn: string, body: string) => `.version 9.0\n.target sm_90a\n.address_size 64\n${fn}\n.visible .entry k()\n.reqntid 64, 1, 1\n{\n.reg .b32 %r<16>;\n.reg .pred %p<4>;\n.shared .align 8 .b8 bar[16];\n${body}\nret;\n}\n`;
  // arrive(bar, lane-varying predicate): `ret` inside a branch on the lane returns to the caller,
  // where the lanes reconverge; lanes 0-7 of each warp arrive, then every lane waits.
  const ARRIVE = `.func arrive(.param .b32 a, .param .b32 n)
{
.reg .b32 %r<4>;
.reg .pred %p<2>;
ld.param.b32 %r1, [a];
ld.param.b32 %r2, [n];
mov.u32 %r3, %laneid;
setp.ge.u32 %p1, %r3, %r2;
@%p1 ret;
mbarrier.arrive.shared.b64 _, [%r1];
ret;
}`;
  const body = (count: number, lanes: number) => `mov.u32 %r1, bar;
mov.u32 %r2, %tid.x;
setp.ne.u32 %p1, %r2, 0;
@%p1 bra INITED;
mbarrier.init.shared.b64 [%r1], ${count};
INITED:
bar.sync 0;
{
.param .b32 p0;
st.param.b32 [p0], %r1;
.param .b32 p1;
st.param.b32 [p1], ${lanes};
call.uni arrive, (p0, p1);
}
WAIT:
mbarrier.try_wait.parity.shared.b64 %p2, [%r1], 0;
@!%p2 bra WAIT;`;

  it('a `ret` under a lane-varying branch returns those lanes to the call; the others arrive (8 per warp)', () => {
    const p = program(mod(ARRIVE, body(16, 8)), 'k.ptx', {});
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect((s.events ?? []).filter((e) => e.e === 'arrive').map((e) => (e.e === 'arrive' ? e.count : 0))).toEqual([8, 8]);
    expect(check(p, { maxStates: 10_000 }).verdict).toBe('ok');
    expect(check(program(mod(ARRIVE, body(17, 8)), 'k.ptx', {}), { maxStates: 10_000 }).verdict).toBe('hang');
  });

  it('a guarded call runs only where its predicate holds; a call of an undefined .func traps where it runs', () => {
    const guarded = body(16, 8).replace('call.uni arrive, (p0, p1);', 'setp.eq.u32 %p3, %r2, 999;\n@%p3 call.uni arrive, (p0, p1);');
    // Nobody arrives: a hang at the wait.
    expect(simulate(program(mod(ARRIVE, guarded), 'k.ptx', {})).verdict).toBe('hang');
    const ext = mod('.extern .func arrive(.param .b32 a, .param .b32 n);', body(16, 8));
    const s = simulate(program(ext, 'k.ptx', {}));
    expect(s.verdict).toBe('trap');
  });

  it('the wrong number of arguments is refused at the call', () => {
    const bad = body(16, 8).replace('call.uni arrive, (p0, p1);', 'call.uni arrive, (p0);');
    expect(() => program(mod(ARRIVE, bad), 'k.ptx', {})).toThrow('call arrive: 1 arguments given, the function has 2');
  });
});

describe('symbol expressions', () => {
  it('an operand `sym+8` (an expression with integer leaves) translates (forms.ptx k_cluster)', () => {
    const r = parsePtx(readFileSync('test/fixtures/ptx/forms.ptx', 'utf8'), 'forms.ptx');
    if (!r.ok) throw new Error('parse');
    expect(() => translatePtx(r.module, { kernel: 'k_cluster', block: 128 })).not.toThrow();
  });
});
