/** A readable, sketch-like text of a Kernel IR (test diagnostics: shrunk counterexamples of the differential tests). */
import type { Expr, Kernel, Stmt } from '../../src/kernel/ir.js';
import { opText } from '../../src/machine/program.js';

export function exprText(e: Expr): string {
  if (e.k === 'num') return String(e.v);
  if (e.k === 'var') return e.name;
  if (e.k === 'un') return `${e.op}(${exprText(e.a)})`;
  return `(${exprText(e.a)} ${e.op} ${exprText(e.b)})`;
}

function body(b: Stmt[], ind: string, out: string[]): void {
  for (const s of b) {
    if (s.s === 'op') out.push(`${ind}${opText(s.op)}    # ${s.loc.line}${'per' in s.op && s.op.per ? ` per=${s.op.per}` : ''}`);
    else if (s.s === 'let') out.push(`${ind}${s.name} = ${exprText(s.value)}`);
    else if (s.s === 'for') { out.push(`${ind}for ${s.var} in ${exprText(s.from)}..${exprText(s.to)}:`); body(s.body, ind + '    ', out); }
    else if (s.s === 'elect') { out.push(`${ind}elect:`); body(s.body, ind + '    ', out); }
    else if (s.s === 'label') out.push(`${ind}${s.name}:`);
    else if (s.s === 'goto') out.push(`${ind}goto ${s.label}${s.cond ? ` if ${exprText(s.cond)}` : ''}`);
    else { out.push(`${ind}if ${exprText(s.cond)}:`); body(s.then, ind + '    ', out); if (s.else) { out.push(`${ind}else:`); body(s.else, ind + '    ', out); } }
  }
}

/** The kernel as text. */
export function kernelText(k: Kernel): string {
  const out = [`kernel ${k.name} arch=${k.arch} cluster=${exprText(k.cluster)}`];
  for (const b of k.barriers) out.push(`barrier ${b.name}[${exprText(b.length)}] count=${exprText(b.count)}`);
  for (const b of k.buffers) out.push(`${b.space} ${b.name}[${exprText(b.length)}] bytes=${exprText(b.bytes)}`);
  for (const r of k.roles) {
    out.push(`role ${r.name} warps=${r.warps} per=${r.per}${r.where ? ` where ${exprText(r.where)}` : ''}:`);
    body(r.body, '    ', out);
  }
  return out.join('\n');
}
