/**
 * Duplicate object keys of a JSON text: `JSON.parse` keeps the last value of a key given twice
 * without a word, so a timing file that sets `issueArrive` twice would silently use one of them.
 */

/** A key given twice in one object: the key, where its second occurrence is (1-based), and the line of the first. */
export interface DuplicateKey {
  key: string;
  line: number;
  col: number;
  firstLine: number;
}

/** The first key given twice in one object of `text` (which must be valid JSON), or null. */
export function duplicateKey(text: string): DuplicateKey | null {
  const stack: { obj: boolean; keys: Map<string, number>; expectKey: boolean }[] = [];
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const top = stack[stack.length - 1];
    if (c === '\n') {
      line++;
      lineStart = i + 1;
    } else if (c === '{' || c === '[') {
      stack.push({ obj: c === '{', keys: new Map(), expectKey: c === '{' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      if (top?.obj) top.expectKey = true;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.obj && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const first = top.keys.get(key);
        if (first !== undefined) return { key, line, col: i - lineStart + 1, firstLine: first };
        top.keys.set(key, line);
        top.expectKey = false;
      }
      i = j;
    }
  }
  return null;
}
