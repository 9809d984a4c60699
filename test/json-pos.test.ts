/**
 * The JSON reader of launch and timing files (src/cli/json-pos.ts): a text that ends too early is
 * located just past its last character, on that character's line, not on the empty line after a
 * final newline.
 */
import { describe, expect, test } from 'vitest';
import { JsonPosError, parseJsonPos } from '../src/cli/json-pos.js';

const posOf = (text: string, line0?: number, col0?: number) => {
  try {
    parseJsonPos(text, line0, col0);
  } catch (e) {
    if (e instanceof JsonPosError) return { message: e.message, ...e.pos };
    throw e;
  }
  return null;
};

describe('the end of the text', () => {
  test('one line and a final newline: past the last character of line 1', () => {
    expect(posOf('{"block": 96, "params": {"param_2": 6\n')).toMatchObject({ line: 1, col: 38 });
  });
  test('blank lines after the last value: its line, not the last line', () => {
    expect(posOf('{"block": 96,\n  "params": {"param_2": 6\n\n\n')).toMatchObject({ line: 2, col: 26 });
  });
  test('a text embedded mid-line keeps its offset', () => {
    expect(posOf('{"a": 1', 5, 10)).toMatchObject({ line: 5, col: 17 });
  });
  test('an error inside the text is where it is', () => {
    expect(posOf('{"a": x}')).toMatchObject({ line: 1, col: 7 });
  });
});
