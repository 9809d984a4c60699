/**
 * What travels with each stored state besides the machine state: the checker's per-state data
 * ({@link Extra}) and the packed integer buffer of encoded states ({@link StateBuf}), plus the
 * machine fields the codec (codec.ts) knows, checked so that a new field fails loudly.
 */
export const STATE_FIELDS = ['now', 'agents', 'bars', 'named', 'clusterDone', 'inflight', 'nextId', 'trapped', 'events', 'mem'];
export const AGENT_FIELDS = ['pc', 'frame', 'status', 'sub', 'tokens', 'wgGroup', 'bulkGroup', 'cpGroup', 'clusterRound', 'tcIssued', 'tcDone', 'wgIssued', 'wgDone', 'lastArrive', 'tmemHeld', 'tmemFreed', 'tmemRelinquished', 'tcLdUnwaited'];
export const OP_FIELDS = ['id', 'kind', 'agent', 'cta', 'bar', 'buf', 'reads', 'bytes', 'left', 'chunks', 'group', 'count', 'remote', 'targets', 'issued', 'seq', 'loc'];

/** The checker's data that travels with a state. */
export interface Extra {
  /** Per (agent, barrier) waiter slot, the last phase its wait observed and where (two words, check/wait-hist.ts). */
  hist: number[];
  /** Per agent: ghost accesses (buffer key × 2 + (write ? 1 : 0)) of completed, not yet committed tcgen05.mma; null when none. */
  ghosts: (number[] | null)[];
  /** Ghost writes of TMA copies that landed before their phase completed: pairs (barrier key, buffer key), sorted; null when none. */
  tghosts: number[] | null;
  /**
   * Per agent: its generic accesses (buffer key × 2 + (write ? 1 : 0)) to buffers the async proxy
   * also accesses, not yet followed by a `fence.proxy.async` of that agent; sorted; null when none.
   */
  dirty: (number[] | null)[];
  /** Generic accesses (same encoding) that a release published without a proxy fence; sorted; null when none. */
  esc: number[] | null;
  /**
   * Per `manual` barrier (slot from the analysis): 0 = not initialized by an operation yet, else
   * (initializing agent + 1) × 8 + bits: 1 fence.mbarrier_init done, 2 published to the CTA,
   * 4 published to the cluster.
   */
  pub: number[];
  /**
   * Per agent: accesses of its completed tcgen05.mma whose commit has landed without completing the
   * phase it arrives in: pairs (barrier key, buffer key × 2 + (write ? 1 : 0)), sorted; null when none.
   * Cleared when that barrier's phase completes.
   */
  cghosts: (number[] | null)[];
  /**
   * Per agent: the barriers its tcgen05.commits landed on as forced (reduced) steps while the
   * landing could still be postponed, sorted; null when none. A barrier leaves the list when its
   * phase completes; the list empties when a commit of the agent lands as an explored (unreduced)
   * step, since commits land in issue order. A CTA exiting while one is listed is `inflight-at-exit`.
   */
  pcm: (number[] | null)[];
  /**
   * Per agent (memory-model detector, check/relaxed.ts): its generic accesses since its last
   * release and the accesses it must not conflict with; sorted; null when none.
   */
  ru: (number[] | null)[];
  /** Accesses published into barrier phases and cluster-barrier rounds (check/relaxed.ts); sorted; null when none. */
  rp: number[] | null;
}

/** A growable int32 buffer of encoded states. */
export class StateBuf {
  data = new Int32Array(1 << 16);
  len = 0;
  offs: number[] = [];
  ids: number[] = [];
  /** Each state's agent record hashes (see `Codec.record` of ./codec.ts), when the encoder was given them; `rhLen` per state. */
  rh = new Int32Array(0);
  rhLen = 0;
  /** Called with the bytes of a larger array before the buffer grows (it may throw to refuse). */
  guard: ((bytes: number) => void) | null = null;
  get count(): number {
    return this.offs.length;
  }
  /** Bytes held. */
  get bytes(): number {
    return this.data.byteLength + this.rh.byteLength + this.offs.length * 16;
  }
  /** Empties the buffer, keeping its storage. */
  reset(): void {
    this.len = 0;
    this.offs.length = 0;
    this.ids.length = 0;
  }
  reserve(n: number): void {
    if (this.len + n <= this.data.length) return;
    let size = this.data.length * 2;
    while (size < this.len + n) size *= 2;
    this.guard?.(size * 4);
    const d = new Int32Array(size);
    d.set(this.data.subarray(0, this.len));
    this.data = d;
  }
}

export function checkFields(what: string, obj: object, known: string[]): void {
  for (const k of Object.keys(obj)) {
    if (!known.includes(k)) throw new Error(`checker: the machine's ${what} has a field '${k}' that the checker's state encoding does not encode (an mbsim bug: please report it)`);
  }
}

/** Encodes, decodes and hashes states of one program. */
