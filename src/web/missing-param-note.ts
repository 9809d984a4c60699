/// <reference lib="dom" />
/**
 * A served PTX kernel that reads a parameter its launch gives no value, where `mbsim serve` could
 * not refuse it at start (the read is behind a branch or after a barrier): the PTX front end's
 * trap names the parameters (`missingParams`), and when a run stops there the page says so as
 * missing input, with an input per parameter that re-translates the kernel with the value, instead
 * of presenting it as a hardware trap. The lookup is the machine's (`missingParamsAt`), the one the
 * CLI's exit 2 uses.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import { missingParamsAt } from '../machine/missing-params.js';
import type { Program } from '../machine/program.js';
import { h } from './dom.js';

/** The missing parameters that stopped a run, where its trap was read, and the diagnostic it left. */
export interface MissingParamStop {
  /** Parameter names, `param_2` or `param_0+20` (the field at byte 20 of a struct parameter). */
  names: string[];
  loc: SrcLoc;
  diag: Diagnostic;
}

/** Names a launch's `params` record can hold (share.ts `launchOf`): a struct field (`param_0+20`) cannot. */
const GIVABLE = /^[A-Za-z_$][\w$]{0,200}$/;

/**
 * The missing-parameter stop among `diagnostics` of a run of `program` (the diagnostic at a trap
 * that carries `missingParams`, with its message), or null when the run stopped otherwise.
 */
export function missingParamStop(program: Program, diagnostics: readonly { diag: Diagnostic; loc?: SrcLoc }[]): MissingParamStop | null {
  for (const d of diagnostics) {
    const names = missingParamsAt(program, d.loc, d.diag.message);
    if (names) return { names, loc: d.loc!, diag: d.diag };
  }
  return null;
}

/** The header verdict's words for a stop: `needs param_2` (or `needs param_1, param_2`). */
export const missingParamVerdict = (stop: MissingParamStop): string => `needs ${stop.names.join(', ')}`;

/**
 * The run summary's block for `stop` of the PTX file `file`: what is missing and where the kernel
 * reads it, that this is the launch's missing input and not a hardware trap, one number input per
 * parameter a launch can hold (`give` receives the values when the user applies them) and the
 * `mbsim serve` flags that give them from the start.
 */
export function missingParamNote(stop: MissingParamStop, file: string, give: (values: Record<string, number>) => void): HTMLElement {
  const many = stop.names.length > 1;
  const what = many ? `Kernel parameters ${stop.names.join(', ')} have no value.` : `Kernel parameter ${stop.names[0]!} has no value.`;
  const flags = stop.names.map((n) => `--param ${n}=VALUE`).join(' ');
  const box = h('div', { class: 'missing-param', id: 'missing-param', role: 'alert' },
    h('p', { class: 'missing-head' }, what),
    h('p', {}, `The kernel reads ${many ? 'them' : 'it'} at line ${stop.loc.line}, and a branch, an address or a count depends on ${many ? 'them' : 'it'} there; `,
      `the launch (its .launch.json and the flags of mbsim serve) gives no value, so the simulation stopped at that line. `,
      `This is missing input, not a trap of the kernel or of an H200.`));
  const givable = stop.names.filter((n) => GIVABLE.test(n));
  if (givable.length) {
    const inputs = givable.map((n) => h('input', { type: 'number', step: 1, class: 'num', 'aria-label': `value of ${n}`, 'data-missing-param': n }));
    const apply = h('button', { type: 'button' }, 'translate with these values');
    const err = h('span', { class: 'error' });
    apply.addEventListener('click', () => {
      const values: Record<string, number> = {};
      for (const inp of inputs) {
        const n = Number(inp.value);
        if (inp.value.trim() === '' || !Number.isSafeInteger(n)) {
          err.textContent = ` ${inp.dataset.missingParam!}: give an integer`;
          return;
        }
        values[inp.dataset.missingParam!] = n;
      }
      err.textContent = '';
      give(values);
    });
    box.appendChild(h('p', {}, 'Give a value here: ', ...givable.flatMap((n, i) => [h('label', {}, `${n} `, inputs[i]!), ' ']), apply, err));
  }
  box.appendChild(h('p', { class: 'hint' }, 'Or start the explorer with it: ', h('code', {}, `mbsim serve ${file} ${flags}`)));
  return box;
}

/**
 * The Check tab's verdict line when a finding among `hazards` (checked `program`) is a
 * missing-parameter trap that a schedule reached: the search says nothing about the kernel with
 * this launch. Null when no finding is one.
 */
export function missingParamCheckVerdict(program: Program, hazards: readonly { kind: string; message: string; locations: readonly SrcLoc[] }[]): string | null {
  for (const hz of hazards) {
    if (hz.kind !== 'not-modelled') continue;
    const names = missingParamsAt(program, hz.locations[0], hz.message);
    if (!names) continue;
    const many = names.length > 1;
    return `No verdict: kernel parameter${many ? 's' : ''} ${names.join(', ')} ${many ? 'have' : 'has'} no value, and a schedule reaches the read at line ${hz.locations[0]!.line}. `
      + `Give ${many ? 'them values' : 'it a value'} (the Timeline tab's note, or mbsim serve --param ${names[0]!}=VALUE) and check again.`;
  }
  return null;
}
