/**
 * A sixth hostile trial: the library's last plain errors (cloneState, replay, phaseTable), the
 * search's setup asked of the memory governor before it allocates, and the new cases of a fresh
 * trial as a new user (flags, values, paths, signals, sidecars).
 */
import { describe, expect, test } from 'vitest';
import * as M from '../src/index.js';
import { searchSetupBytes } from '../src/check/setup-bytes.js';
import { explore } from '../src/check/explore.js';
import { Governor } from '../src/machine/governor.js';
import { LARGEST } from './support/largest-launch.js';

const SRC = 'kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n    mbarrier.try_wait.parity b[0], 0\n';
const prog = () => M.instantiate(M.parseSketch(SRC, 'k.mbk').kernel!);

/** The error `f` throws (fails when it throws none). */
function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
}

describe('the library\'s last plain errors name the function and the argument', () => {
  test('cloneState(garbage): a TypeError (it threw "Cannot read properties of null")', () => {
    for (const v of [null, {}, { agents: 3 }, 'x', [], { agents: [], bars: [], named: [], clusterDone: [], inflight: [], mem: 0 }]) {
      const e = thrown(() => M.cloneState(v as never));
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toMatch(/^cloneState: s must be a MachineState \(from Machine.initial or Machine.step\), got /);
    }
    const m = new M.Machine(prog());
    const s = m.initial();
    expect(M.cloneState(s)).toEqual(s);
  });

  test('replay with a choice out of range or not enabled: a RangeError naming the schedule index (it threw "Cannot read properties of undefined")', () => {
    const p = prog();
    const cases: [number[], string][] = [
      [[5], 'replay: schedule[0] = 5 chooses agent 5, and the program has 1 agent (a schedule comes from a check\'s hazard or witness)'],
      [[1e12], 'replay: schedule[0] = 1000000000000 chooses agent 1000000000000, and the program has 1 agent'],
      [[-3], 'replay: schedule[0] = -3 chooses async operation 2, which is not in flight and ready there'],
      [[0, 0, 0, 0], 'replay: schedule[2] = 0 chooses agent 0 (p), which cannot step there'],
    ];
    for (const [schedule, msg] of cases) {
      const e = thrown(() => M.replay(p, schedule));
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toContain(msg);
    }
    expect(M.replay(p, [0, 0]).steps.map((s) => s.actor)).toEqual(['p', 'p']);
  });

  test('phaseTable with an unknown role, barrier or variable: a RangeError naming the argument (a plain Error before)', () => {
    const p = prog();
    const cases: [() => unknown, string][] = [
      [() => M.phaseTable(p, 'nope'), "phaseTable: role 'nope' is no role of the program (its roles: p)"],
      [() => M.phaseTable(p, 'p', 'zz'), "phaseTable: barrier 'zz' is no barrier array of the program (its barriers: b)"],
      [() => M.phaseTable(p, 'p', 'b', 'q'), "phaseTable: phaseVar 'q' is no variable of role 'p' (its variables: warp, warpgroup)"],
    ];
    for (const [f, msg] of cases) {
      const e = thrown(f);
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toBe(msg);
    }
  });
});

describe('the search\'s setup is asked of the governor before the codec allocates it', () => {
  test('searchSetupBytes grows with the launch: under 2 MB for one agent, over 30 MB for the largest launch (33,792 warps, 261,888 barriers)', () => {
    expect(searchSetupBytes(prog())).toBeLessThan(2 * 1048576);
    const big = M.instantiate(M.parseSketch(LARGEST, 'largest.mbk').kernel!);
    expect(searchSetupBytes(big)).toBeGreaterThan(30 * 1048576);
  });

  test('explore stops by max-memory, 0 states, when the resident set plus the setup would pass the bound (the codec\'s 150 MB took a 300 MiB check to 325-345 MiB)', () => {
    const p = prog();
    const need = searchSetupBytes(p);
    const rss = 1000 * 1048576;
    const at = (bound: number) => explore(p, { governor: new Governor({ maxMemory: bound }, { rss: () => rss, collect: null }) });
    const refused = at(rss + need - 1);
    expect([refused.stoppedBy, refused.states, refused.complete]).toEqual(['max-memory', 0, false]);
    const fits = at(rss + need + 64 * 1048576);
    expect([fits.stoppedBy, fits.complete]).toEqual([null, true]);
  });
});
