/**
 * One sentence per hazard kind the checker reports (besides the model's diagnostic codes, which
 * carry their own messages): SARIF rule descriptions and the explorer's hazard list use it.
 * docs/CHECK.md's hazard table is the long form. {@link HAZARD_FIX} says how each is fixed.
 */
export const HAZARD_TEXT: Readonly<Record<string, string>> = Object.freeze({
  hang: 'Some schedule reaches a state where agents are blocked and nothing can make progress.',
  cycle: 'A hang whose blocked agents wait on one another in a ring: none can move first.',
  race: 'Two accesses to the same buffer, at least one a write, that happens-before does not order.',
  'phase-alias': 'A parity wait passed on a phase other than the one the waiter was due to observe (an old phase, or phases it skipped).',
  'vacuous-wait': 'A wait on a data barrier passed on a fresh barrier without any phase completing.',
  'tx-mismatch': 'The bytes a phase expects differ from the bytes the copies issued for it deliver.',
  'inflight-at-exit': 'A CTA exits while asynchronous operations into it are still in flight.',
  'missing-fence': 'Generic and async-proxy accesses to shared memory with no fence.proxy.async between them.',
  'missing-init-fence': 'A barrier used by other threads, the async proxy or another CTA before its initialization was published.',
  'uninit-use': 'A barrier operation that may see the barrier uninitialized.',
  'missing-wait': 'A data barrier completes phases that no thread waits on, or a reader never waits for the copy it reads.',
  scope: 'A remote arrive whose release scope (.cta) does not reach the other CTA\'s waiters.',
  lapping: 'A bar.arrive joins the named-barrier generation its agent\'s previous bar.arrive joined.',
  'count-mismatch': 'A barrier\'s arrivals do not add up to whole phases of its expected count.',
  'trip-mismatch': 'Roles disagree about how many phases a barrier completes (their trip counts).',
  'unused-barrier': 'A barrier that is declared but that no operation names.',
  'unreachable-arrive': 'An arrive site that no agent executes with these parameters.',
});

/**
 * How each hazard kind of {@link HAZARD_TEXT} is fixed, in one or two sentences (docs/CHECK.md's
 * hazard table and its sections "Races", "Fences", "Life cycle" are the long form): the help of the
 * SARIF rules, which code-scanning tools show beside a finding with no link to follow.
 */
export const HAZARD_FIX: Readonly<Record<string, string>> = Object.freeze({
  hang: "Make every waited phase completable: count the arrivals and the arrive.expect_tx bytes each phase needs against what the remaining code and the copies in flight deliver. The finding lists each blocked waiter, its barrier's phase, pending arrivals and tx-count, and who could still signal it.",
  cycle: "Break the ring: let one agent signal before it waits. The usual cause is a producer's first wait on an empty (release) barrier with parity 0; the producer-start idiom waits with parity 1, which passes on the fresh barrier.",
  race: "Order the two accesses by a barrier hand-off: the first side releases (mbarrier.arrive, or the copy's complete_tx) the phase the second side waits on before it accesses the buffer. The finding's 'released by' and 'fix' lines name the arrive and where the wait or release belongs.",
  'phase-alias': 'Keep each waiter\'s parity in step with its barrier: flip the phase bit once per round over the stages, and carry the phase across persistent tiles instead of restarting it per tile.',
  'vacuous-wait': 'Wait on a data barrier with parity 0 first, the phase its first copy completes: parity 1 on a fresh barrier passes at once, which is the idiom of release (empty) barriers only.',
  'tx-mismatch': 'Make arrive.expect_tx count exactly the bytes of the copies that complete on that phase (every box of every operand; every CTA\'s share of a multicast).',
  'inflight-at-exit': 'Wait for the asynchronous work before the CTA exits: the mbarrier its completion signals, cp.async.bulk.wait_group 0 for bulk stores, a tcgen05.commit and its wait for tcgen05.mma.',
  'missing-fence': 'Put fence.proxy.async between the generic shared-memory accesses and the async-proxy access: after the writes, before the release that the async side\'s issuer acquires.',
  'missing-init-fence': 'Publish mbarrier.init before others use the barrier: a CTA synchronization (bar.sync, __syncthreads) after the init; for other CTAs, fence.mbarrier_init.release.cluster and then barrier.cluster.arrive / wait.',
  'uninit-use': 'Publish mbarrier.init before the use: a CTA synchronization (bar.sync, __syncthreads) between the initializing thread\'s init and the other threads\' first operation on the barrier.',
  'missing-wait': 'Wait on the data barrier (try_wait.parity on the phase its copies complete) before reading the buffer they fill, in every thread that reads it; remove a data barrier nothing waits on.',
  scope: 'Release to the cluster: write the remote arrive as mbarrier.arrive.release.cluster (a .cta release orders nothing for another CTA), and acquire with .cluster in the waiter.',
  lapping: 'Let the named barrier\'s generation complete before the agent arrives again: a bar.sync between two bar.arrive of one agent, or alternate between two barrier ids.',
  'count-mismatch': 'Make the expected count equal to the arrivals each phase receives (the threads or warps that arrive, times the count of each arrive); a named barrier\'s thread count equal to the threads that use its id.',
  'trip-mismatch': 'Make the roles run the same number of phases on the barrier: the same trip counts and the same stage mapping on the producer and the consumer side.',
  'unused-barrier': 'Remove the barrier, or fix the branch or parameter that keeps the operation naming it from running.',
  'unreachable-arrive': 'Check the branch that guards the arrive: with these parameters no agent of its role takes it, so the phases it should complete rely on other arrives (or never complete).',
});
