/** The URL a spawned `mbsim serve` prints once it listens (rejects after 30 s or when it exits first). */
import type { ChildProcess } from 'node:child_process';

export function serverUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = '';
    const t = setTimeout(() => reject(new Error(`no URL after 30 s: ${text}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /http:\/\/[^\s]+\//.exec(text);
      if (m) {
        clearTimeout(t);
        resolve(m[0]);
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${text}`)));
  });
}
