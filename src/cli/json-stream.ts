/**
 * JSON written in chunks: the text of `JSON.stringify(value)` as a sequence of strings of about
 * `chunkChars` characters each, split only between the elements of an array or the members of an
 * object. A run's events or a trace can be hundreds of megabytes of JSON: built as one string they
 * exceed what a string may hold (V8: about 2^29 characters, "Invalid string length") and double
 * the memory; written chunk by chunk they need only one chunk at a time.
 *
 * A `stop` callback, consulted between chunks, ends the arrays being written early (each stays
 * valid JSON); {@link JsonStream.cut} then counts the elements left out, so the caller can say so.
 */

/** Characters per chunk (1 Mi: a small document is one chunk, one line). */
export const JSON_CHUNK = 1 << 20;

/** Levels of arrays and objects written member by member; deeper values are one `JSON.stringify`. */
const SPLIT_DEPTH = 3;

const plain = (v: object) => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/** See the module comment. */
export class JsonStream {
  /** Array elements left out because `stop` said so (0: the document is whole). */
  cut = 0;
  private buf = '';

  constructor(private readonly stop: () => boolean = () => false, private readonly chunkChars = JSON_CHUNK) {}

  /**
   * The chunks of `value`'s JSON (`JSON.stringify` semantics for plain data: `undefined` members
   * left out, `null` in arrays). `trailer`, called once the members of a top-level object are
   * written, adds members at its end (e.g. what `stop` left out).
   */
  *chunks(value: unknown, trailer?: () => Record<string, unknown> | null): Generator<string> {
    this.trailer = trailer ?? null;
    yield* this.value(value, 0);
    if (this.buf) yield this.flush();
  }

  private trailer: (() => Record<string, unknown> | null) | null = null;

  private flush(): string {
    const s = this.buf;
    this.buf = '';
    return s;
  }

  private *put(s: string): Generator<string> {
    this.buf += s;
    if (this.buf.length >= this.chunkChars) yield this.flush();
  }

  private *value(v: unknown, depth: number): Generator<string> {
    const splittable = depth < SPLIT_DEPTH && typeof v === 'object' && v !== null && (Array.isArray(v) || (plain(v) && typeof (v as { toJSON?: unknown }).toJSON !== 'function'));
    if (!splittable) {
      yield* this.put(JSON.stringify(v) ?? 'null');
      return;
    }
    if (Array.isArray(v)) {
      yield* this.put('[');
      for (let i = 0; i < v.length; i++) {
        if (this.stop()) {
          this.cut += v.length - i;
          break;
        }
        if (i) yield* this.put(',');
        const x = v[i];
        yield* this.value(x === undefined || typeof x === 'function' || typeof x === 'symbol' ? null : x, depth + 1);
      }
      yield* this.put(']');
      return;
    }
    yield* this.put('{');
    let first = true;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      yield* this.put(`${first ? '' : ','}${JSON.stringify(k)}:`);
      first = false;
      yield* this.value(x, depth + 1);
    }
    const more = depth === 0 && this.trailer ? this.trailer() : null;
    if (more) for (const [k, x] of Object.entries(more)) {
      yield* this.put(`${first ? '' : ','}${JSON.stringify(k)}:${JSON.stringify(x)}`);
      first = false;
    }
    yield* this.put('}');
  }
}
