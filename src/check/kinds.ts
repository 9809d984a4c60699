/**
 * One sentence per hazard kind the checker reports (besides the model's diagnostic codes, which
 * carry their own messages): SARIF rule descriptions and the explorer's hazard list use it.
 * docs/CHECK.md's hazard table is the long form.
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
