/**
 * Kernel names of a PTX module: the Itanium-mangled `.entry` names nvcc writes, shortened for the
 * agents (`tma_wgmma.w0`, `device_kernel.w0`) and matched by `--kernel`.
 */

/**
 * The Itanium name's components: `_Z9tma_wgmma14CUtensorMap_st…` → [`tma_wgmma`], a nested name
 * `_ZN7cutlass13device_kernelINS_4gemm…EEvT_` → [`cutlass`, `device_kernel`] (template arguments
 * left out); [] when `n` is not such a name.
 */
function components(n: string): string[] {
  const nested = n.startsWith('_ZN');
  let i = nested ? 3 : n.startsWith('_Z') ? 2 : -1;
  if (i < 0) return [];
  if (nested) while (/[rVK]/.test(n[i] ?? '')) i++;
  const out: string[] = [];
  for (let m; (m = /^\d+/.exec(n.slice(i))); ) {
    const len = Number(m[0]);
    const id = n.slice(i + m[0].length, i + m[0].length + len);
    if (id.length !== len) return [];
    out.push(id);
    i += m[0].length + len;
    if (!nested) break;
  }
  return out;
}

/** The kernel's unqualified name (`tma_wgmma`, `device_kernel` of `cutlass::device_kernel<…>`), else the name. */
export function demangle(n: string): string {
  return components(n).at(-1) ?? n;
}

/** Whether `want` names entry `n`: its full name, its unqualified name, or its qualified one (`cutlass::device_kernel`). */
export function namesEntry(n: string, want: string): boolean {
  const c = components(n);
  return n === want || (c.length > 0 && (c.at(-1) === want || c.join('::') === want));
}
