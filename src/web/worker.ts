/**
 * The explorer's worker: simulations, the exhaustive checker and phase tables run here, off the
 * page's thread, so input never waits for them. A request names the kernel by its source (a
 * bundled example or file, or sketch text) and parameters; the worker loads and instantiates it
 * itself (programs hold closures and cannot be posted) and answers with plain data. The checker
 * posts progress every ~0.25 s; cancelling a check terminates the worker (src/web/engine.ts).
 */
import { handle, type WorkerReply, type WorkerRequest } from './engine-protocol.js';

interface WorkerScope {
  onmessage: ((e: { data: WorkerRequest }) => void) | null;
  postMessage(m: WorkerReply): void;
}
const scope = self as unknown as WorkerScope;

scope.onmessage = (e) => {
  handle(e.data, (m) => {
    try {
      scope.postMessage(m);
    } catch (err) {
      scope.postMessage({ type: 'error', id: m.id, error: `could not send the result: ${String((err as Error)?.message ?? err)}` });
    }
  });
};
