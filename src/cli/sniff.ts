/**
 * What a file given to the wrong reader looks like: PTX saved as `.mbk`, a sketch given to
 * `mbsim info`. Only the file's start is looked at (its first {@link SNIFF_CHARS} characters).
 */

/** Characters of a file looked at. */
const SNIFF_CHARS = 1 << 16;

/** Whether `text` reads as PTX: a module directive nvcc writes (`.version`, `.target`, `.entry`, …) at the start of a line. */
export function looksLikePtx(text: string): boolean {
  return /^[ \t]*(\.version|\.target|\.address_size|(\.visible[ \t]+)?\.entry)\b/m.test(text.slice(0, SNIFF_CHARS));
}

/** Whether `text` reads as a sketch: a `kernel NAME` line and no PTX module directive. */
export function looksLikeSketch(text: string): boolean {
  return /^[ \t]*kernel[ \t]+[A-Za-z_]/m.test(text.slice(0, SNIFF_CHARS)) && !looksLikePtx(text);
}
