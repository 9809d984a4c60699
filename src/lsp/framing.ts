/**
 * The base protocol's framing, checked before vscode-jsonrpc reads it. Its reader waits for as
 * many bytes as a `Content-Length` says, keeping all of them: `Content-Length: 99999999999999`
 * followed by a stream of bytes grew the server past 3.7 GB; a header it cannot read
 * (`Content-Length: abc`, no header at all) left the server deaf without a word. Here every
 * header is read first: a message is at most {@link MAX_MESSAGE_BYTES}, a header at most
 * {@link MAX_HEADER_BYTES}, and a violation stops the stream with one line naming the message
 * and what is wrong with it (the server then ends with exit code 2). A body that is not JSON
 * (vscode-jsonrpc dropped it without a word) is held back and named to `dropped`: the framing
 * stays in step, so the server goes on with the next message.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** Largest message body accepted (16 MiB: sixteen times the largest sketch, docs/LANGUAGE.md §Limits). */
export const MAX_MESSAGE_BYTES = 16 << 20;
/** Largest header block accepted (a header is a line or two). */
export const MAX_HEADER_BYTES = 8192;

const END = Buffer.from('\r\n\r\n');

/** The body length a header block declares, or why it declares none. */
function contentLength(header: string): number | string {
  let length: number | string = 'the header has no Content-Length';
  for (const line of header.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) return `header line ${JSON.stringify(line.slice(0, 40))} is not "Name: value"`;
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
    const v = line.slice(colon + 1).trim();
    if (!/^\d{1,16}$/.test(v)) return `Content-Length ${JSON.stringify(v.slice(0, 40))} is not a byte count`;
    const n = Number(v);
    if (n > MAX_MESSAGE_BYTES) return `Content-Length ${n.toLocaleString('en-US')} is more than the ${MAX_MESSAGE_BYTES.toLocaleString('en-US')} bytes a message may have`;
    length = n;
  }
  return length;
}

/**
 * A pass-through stream for the client's bytes: each header block is checked, then passed on with
 * its body once the body is whole and parses as JSON. At the first framing violation `fail` gets
 * one line (`message N: …`) and nothing more passes; a body that is not JSON is left out and
 * `dropped` gets its line (`message N: its body is not JSON: …`).
 */
export function checkedFraming(fail: (line: string) => void, dropped: (line: string) => void = () => undefined): Transform {
  let header = Buffer.alloc(0);
  let head = Buffer.alloc(0); // the header block of the body being read
  let parts: Buffer[] = []; // the body read so far
  let body = 0; // bytes of the current body still to read
  let messages = 0;
  let failed = false;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      let at = 0;
      while (!failed && at < chunk.length) {
        if (body > 0) {
          const n = Math.min(body, chunk.length - at);
          parts.push(chunk.subarray(at, at + n));
          body -= n;
          at += n;
          if (body === 0) pass(this);
          continue;
        }
        header = Buffer.concat([header, chunk.subarray(at)]);
        at = chunk.length;
        const end = header.indexOf(END);
        if (end < 0) {
          if (header.length > MAX_HEADER_BYTES) {
            failed = true;
            fail(`message ${messages + 1}: no end of its header (an empty line) within ${MAX_HEADER_BYTES.toLocaleString('en-US')} bytes`);
          }
          continue;
        }
        const len = contentLength(header.subarray(0, end).toString('ascii'));
        if (typeof len === 'string') {
          failed = true;
          fail(`message ${messages + 1}: ${len}`);
          continue;
        }
        messages++;
        head = header.subarray(0, end + END.length);
        parts = [];
        // The rest of the buffered bytes begin the body: go on with them as a chunk of their own.
        chunk = header.subarray(end + END.length);
        at = 0;
        header = Buffer.alloc(0);
        body = len;
        if (body === 0) pass(this);
      }
      done();
    },
  });

  /** Passes on the message just read, header and body, unless its body is not JSON. */
  function pass(out: Transform): void {
    const content = Buffer.concat(parts);
    parts = [];
    try {
      JSON.parse(content.toString('utf8'));
    } catch (err) {
      dropped(`message ${messages}: its body is not JSON (${(err as Error).message.slice(0, 120)}); dropped`);
      return;
    }
    out.push(Buffer.concat([head, content]));
  }
}
