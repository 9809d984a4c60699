/// <reference lib="dom" />
/**
 * Barrier mechanism (the seed's first figure, made live): one mbarrier as its 64-bit word's fields,
 * the operations as buttons that call the model's functions (src/model/mbarrier.ts) on it, the
 * completion condition, the result of a parity wait, and the model's diagnostic for every undefined
 * operation (code, message, what an H200 does).
 */
import type { Diagnostic } from '../../model/diagnostics.js';
import { encodeWord } from '../../model/encoding.js';
import { arrive, completeTx, init, newBarrier, testParity, TRAP, type MBarrier } from '../../model/mbarrier.js';
import { h, replace, setText } from '../dom.js';

type FieldId = 'phase' | 'pending' | 'expected' | 'tx';

/** The chapter's words for each field (seed chapter 08, "mbarrier"). */
const EXPLAIN: Record<FieldId, { title: string; bits: string; text: string[] }> = {
  phase: {
    title: 'Phase parity',
    bits: 'bit 63',
    text: [
      'Which use of the barrier is in progress. A wait names a phase by its parity alone (phase mod 2: 0 or 1), and the parity is all the word keeps of the phase number.',
      'A barrier serves many rounds of a loop: once a phase has all of its arrivals and bytes, the barrier moves on to a fresh phase and counts again from the start. Neighbouring phases differ in parity, which is how a waiter tells the completion it needs from the one before it.',
    ],
  },
  pending: {
    title: 'Pending arrival count',
    bits: 'bits 62–43 (stored as 2^20 − pending)',
    text: [
      'How many arrivals the phase in progress still lacks.',
      'Each arrival lowers it by one (or by the arrive\'s count). Typical sources: the producer\'s mbarrier.arrive.expect_tx(bytes) as it launches a TMA load; a tcgen05.commit…mbarrier::arrive, which arrives by itself once the tcgen05 operations issued before it are done; and a plain mbarrier.arrive from any thread, such as a consumer handing a buffer back.',
    ],
  },
  expected: {
    title: 'Expected arrival count',
    bits: 'bits 20–1 (stored as 2^20 − expected)',
    text: [
      'Set by mbarrier.init(count) before anyone uses the barrier: the number of arrivals that every phase needs. A freshly initialized barrier sits in phase 0 with pending equal to this number.',
      'Whenever a phase completes, pending is reloaded from this count for the phase that follows.',
    ],
  },
  tx: {
    title: 'tx-count',
    bits: 'bits 41–21 (stored as −tx mod 2^21)',
    text: [
      'Bytes of asynchronous copies that the phase still waits for: announced by expect_tx, taken off as the data lands.',
      'mbarrier.arrive.expect_tx(bytes) arrives and raises the tx-count by the size of the copies about to start; every TMA transfer that finishes lowers it by the bytes it delivered (complete_tx). A phase ends only when both numbers are zero: pending arrivals == 0 and tx-count == 0.',
    ],
  },
};

/** The chapter's figure as a scripted sequence of operations. */
const SEED_SCRIPT: { label: string; run: (b: MBarrier, d: Diagnostic[]) => number }[] = [
  { label: 'init(1)', run: (b, d) => init(b, 1, d) },
  { label: 'arrive.expect_tx(4096)', run: (b, d) => arrive(b, 1, { expectTx: 4096 }, d) },
  { label: 'complete_tx(2048) — first TMA copy lands', run: (b, d) => completeTx(b, 2048, d) },
  { label: 'complete_tx(2048) — second TMA copy lands', run: (b, d) => completeTx(b, 2048, d) },
];

export interface MechanismView {
  el: HTMLElement;
  /**
   * Shows a barrier of a run (the counterexample replay's barrier, at its current step) with a
   * caption saying where it comes from; operations then apply to this copy. null: back to the
   * stand-alone barrier.
   */
  showBarrier(b: MBarrier | null, caption?: string): void;
}

export function mechanismView(): MechanismView {
  let b: MBarrier = newBarrier();
  let trapped: Diagnostic | null = null;
  let focus: FieldId = 'phase';
  /** The chapter figure's next step (0: not started or finished). */
  let seedStep = 0;
  /** The parity of the last try_wait the reader ran (its result is recomputed after each operation). */
  let lastWait: number | null = null;
  const log: { text: string; cls: string }[] = [];

  const wordHex = h('code', { class: 'word-hex', 'aria-label': '64-bit word in hex' });
  const fieldBtns = new Map<FieldId, { btn: HTMLButtonElement; val: HTMLElement }>();
  const fieldCell = (id: FieldId, cls: string) => {
    const val = h('span', { class: 'field-val' });
    const btn = h('button', { class: `field ${cls}`, type: 'button', 'aria-pressed': 'false', 'aria-label': `${EXPLAIN[id].title} field`, 'data-field': id, title: `${EXPLAIN[id].title}: click for what this field means` },
      h('span', { class: 'field-bits' }, EXPLAIN[id].bits.replace(/ \(.*$/, '')), h('span', { class: 'field-name' }, EXPLAIN[id].title), val);
    btn.addEventListener('click', () => {
      focus = id;
      render();
    });
    fieldBtns.set(id, { btn, val });
    return btn;
  };
  const unknown = (bits: string) => h('span', { class: 'field unknown', title: 'never seen set on an H200' }, h('span', { class: 'field-bits' }, bits), h('span', { class: 'field-name' }, '?'));
  const word = h('div', { class: 'word', role: 'group', 'aria-label': 'mbarrier fields (click one to explain it)' },
    fieldCell('phase', 'f-phase'), fieldCell('pending', 'f-pending'), unknown('42'), fieldCell('tx', 'f-tx'), fieldCell('expected', 'f-expected'), unknown('0'));
  const explainTitle = h('h3', {});
  const explainBody = h('div', {});
  const explain = h('div', { class: 'explain', 'aria-live': 'polite', id: 'mech-explain' }, explainTitle, explainBody);

  const status = h('p', { class: 'mech-status', id: 'mech-status', 'aria-live': 'polite' });
  const fromRun = h('p', { class: 'mech-from', id: 'mech-from', hidden: true });
  let own: MBarrier | null = null;
  const condPending = h('li', { id: 'cond-pending' });
  const condTx = h('li', { id: 'cond-tx' });
  const condVerdict = h('p', { class: 'cond-verdict', id: 'cond-verdict' });
  // The moment an operation completed a phase: both conditions held (ticked) just before the flip.
  const momentHead = h('p', { class: 'cond-moment-head' });
  const momentList = h('ul', { class: 'cond-moment-list' });
  const momentFlip = h('p', { class: 'cond-flip' });
  const moment = h('div', { class: 'cond-moment', id: 'cond-moment', hidden: true }, momentHead, momentList, momentFlip);
  /** The last operation's phase completion (null: it completed none). */
  let flip: { op: string; from: number; to: number; expected: number } | null = null;
  const cond = h('div', { class: 'cond' }, h('h3', {}, 'Completion condition'), moment, h('p', { class: 'cond-now-head' }, 'Now:'), h('ul', {}, condPending, condTx), condVerdict);
  const waitResult = h('p', { class: 'wait-result', id: 'wait-result', 'aria-live': 'polite' }, 'try_wait not run yet.');
  const diagBox = h('div', { class: 'diag', id: 'mech-diag', role: 'alert', hidden: true });
  const logList = h('ol', { class: 'oplog', id: 'mech-log', 'aria-label': 'operations applied' });
  const seedCaption = h('p', { class: 'seed-caption', id: 'seed-caption', 'aria-live': 'polite' });
  const figBtn = h('button', { type: 'button', id: 'fig-step', title: 'steps through the chapter’s figure: init(1), arrive.expect_tx(4096), two 2,048-byte TMA copies' }, 'Chapter figure: step 1 of 4');
  /** A tx-count in words (a negative one: bytes completed before an expect_tx raised it). */
  const txWords = (tx: number) => (tx < 0 ? `${-tx} bytes credited before they were expected` : `${tx} tx byte${tx === 1 ? '' : 's'}`);

  const num = (label: string, value: number, min: number, max: number) =>
    h('input', { type: 'number', value, min, max, step: 1, 'aria-label': label, class: 'num' });
  const initCount = num('init count', 1, 0, 1 << 21);
  const etxBytes = num('arrive.expect_tx bytes', 4096, 0, 1 << 21);
  const ctxBytes = num('complete_tx bytes', 2048, 0, 1 << 21);
  const parSel = h('select', { 'aria-label': 'try_wait parity' }, h('option', { value: '0' }, '0'), h('option', { value: '1' }, '1'));
  // Accessible name = the visible text (the operation's PTX name); the title explains it.
  const button = (label: string, title: string, fn: () => void) => {
    const btn = h('button', { type: 'button', title }, label);
    btn.addEventListener('click', fn);
    return btn;
  };
  const intOf = (el: HTMLInputElement) => {
    const v = Number(el.value);
    return Number.isFinite(v) ? Math.trunc(v) : 0;
  };

  const apply = (label: string, fn: (b: MBarrier, d: Diagnostic[]) => number, fromFigure = false) => {
    if (!fromFigure && seedStep > 0) {
      // Another operation interrupts the chapter's figure.
      seedStep = 0;
      setText(seedCaption, 'The chapter’s figure was interrupted by another operation; its button starts it over.');
      figLabel();
    }
    if (trapped) {
      log.push({ text: `${label}: ignored — the kernel already trapped; Reset to start over`, cls: 'err' });
      render();
      return;
    }
    const before = b.phase;
    const diags: Diagnostic[] = [];
    const r = fn(b, diags);
    flip = b.phase > before && r !== TRAP ? { op: label, from: before, to: b.phase, expected: b.expected } : null;
    const shown = diags[0] ?? null;
    let text = label;
    let cls = '';
    if (r === TRAP || diags.some((d) => d.trap)) {
      trapped = diags.find((d) => d.trap) ?? shown;
      text += ' → the H200 traps here';
      cls = 'err';
    } else if (b.phase > before) {
      text += ` → phase ${before} completed; parity is now ${b.phase & 1}`;
      cls = 'ok';
    }
    if (diags.length) text += ` [${diags.map((d) => d.code).join(', ')}]`;
    log.push({ text, cls });
    showDiag(shown);
    render();
    showWait(false);
  };
  const showDiag = (d: Diagnostic | null) => {
    diagBox.hidden = !d;
    if (!d) return replace(diagBox);
    replace(diagBox,
      h('p', { class: 'diag-head' }, h('span', { class: `sev ${d.severity}` }, d.severity), ' ', h('code', { class: 'diag-code' }, d.code), d.trap ? h('span', { class: 'trap' }, ' traps') : ''),
      h('p', { class: 'diag-msg' }, d.message),
      h('p', { class: 'diag-h200' }, h('strong', {}, 'H200: '), d.h200),
      d.state ? h('p', { class: 'diag-state' }, `state before: phase ${d.state.phase}, pending ${d.state.pending}/${d.state.expected}, tx ${d.state.tx} B (${d.state.status})`) : '');
  };

  const ops = h('div', { class: 'ops', role: 'group', 'aria-label': 'mbarrier operations' },
    h('div', { class: 'op-row' }, button('mbarrier.init', 'init(count): sets the expected arrival count and starts phase 0', () => apply(`init(${intOf(initCount)})`, (x, d) => init(x, intOf(initCount), d))), h('label', {}, 'count ', initCount)),
    h('div', { class: 'op-row' }, button('mbarrier.arrive', 'one arrival', () => apply('arrive', (x, d) => arrive(x, 1, {}, d)))),
    h('div', { class: 'op-row' }, button('arrive.expect_tx', 'one arrival that first raises the tx-count by the bytes', () => apply(`arrive.expect_tx(${intOf(etxBytes)})`, (x, d) => arrive(x, 1, { expectTx: intOf(etxBytes) }, d))), h('label', {}, 'bytes ', etxBytes)),
    h('div', { class: 'op-row' }, button('complete_tx', 'what the TMA engine reports as bytes land', () => apply(`complete_tx(${intOf(ctxBytes)})`, (x, d) => completeTx(x, intOf(ctxBytes), d))), h('label', {}, 'bytes ', ctxBytes)),
    h('div', { class: 'op-row' }, button('tcgen05.commit completion', 'the one arrival tcgen05.commit reports once the earlier tcgen05 operations complete', () => apply('tcgen05.commit completion (arrive)', (x, d) => arrive(x, 1, {}, d)))),
    h('div', { class: 'op-row' }, button('try_wait.parity', 'tests whether the phase with this parity has completed', () => tryWait()), h('label', {}, 'parity ', parSel)),
    h('div', { class: 'op-row' },
      button('Reset barrier', 'a fresh, uninitialized barrier', () => {
        b = newBarrier();
        trapped = null;
        flip = null;
        seedStep = 0;
        log.length = 0;
        lastWait = null;
        showDiag(null);
        setText(seedCaption, '');
        render();
        showWait(false);
        figLabel();
      }),
      figBtn),
    seedCaption,
  );
  function figLabel(): void {
    const n = SEED_SCRIPT.length;
    setText(figBtn, seedStep === 0 ? (log.length && seedCaption.textContent?.startsWith('Step') ? `Chapter figure: start over (step 1 of ${n})` : `Chapter figure: step 1 of ${n}`) : `Chapter figure: step ${seedStep + 1} of ${n}`);
  }
  figBtn.addEventListener('click', () => {
    const n = SEED_SCRIPT.length;
    if (seedStep === 0) {
      // Step 1 starts from a fresh barrier (said in the caption: nothing restarts silently).
      b = newBarrier();
      trapped = null;
      log.length = 0;
      lastWait = null;
      showDiag(null);
    }
    const k = seedStep;
    const st = SEED_SCRIPT[k]!;
    apply(st.label, st.run, true);
    seedStep = k + 1 < n ? k + 1 : 0;
    setText(seedCaption, `Step ${k + 1} of ${n} of the chapter’s figure: ${st.label}${k === 0 ? ' (on a fresh barrier)' : ''}.${k + 1 === n ? ' The figure is complete: both the arrival and all 4,096 bytes are in, so phase 0 completed. The button starts it over.' : ''}`);
    figLabel();
  });

  const tryWait = () => {
    lastWait = Number(parSel.value) & 1;
    showWait(true);
  };
  /**
   * The wait's result for the barrier as it is now. `ran`: the reader pressed try_wait (logged);
   * otherwise the last wait is re-evaluated after an operation, so its result is never stale.
   */
  function showWait(ran: boolean): void {
    const p = lastWait;
    if (p === null) {
      setText(waitResult, 'try_wait not run yet.');
      waitResult.className = 'wait-result';
      return;
    }
    const again = ran ? '' : ' (re-evaluated after the last operation)';
    if (b.status !== 'valid') {
      setText(waitResult, `try_wait.parity(${p}) on a barrier that is not initialized: undefined${again}`);
      waitResult.className = 'wait-result block';
      return;
    }
    const ok = testParity(b, p);
    const msg = ok
      ? b.phase === 0
        ? `try_wait.parity(${p}) → true${again}: the barrier is still in phase 0 and parity ${p} names the phase before it, which never ran, so the wait passes at once.`
        : `try_wait.parity(${p}) → true${again}: the phase with parity ${p} (the one before the current phase ${b.phase}) has completed; the consumer proceeds.`
      : `try_wait.parity(${p}) → false${again}: the current phase ${b.phase} has parity ${p} and has not completed; the consumer retries (blocks).`;
    setText(waitResult, msg);
    waitResult.className = `wait-result ${ok ? 'pass' : 'block'}`;
    if (ran) {
      log.push({ text: `try_wait.parity(${p}) → ${ok}`, cls: ok ? 'ok' : '' });
      renderLog();
    }
  }

  /** After an operation that completed a phase: the instant both counts reached 0, then the flip. */
  function renderMoment(): void {
    moment.hidden = !flip;
    if (!flip) return;
    const f = flip;
    setText(momentHead, `The moment ${f.op} completed phase ${f.from}: both conditions held.`);
    replace(momentList,
      h('li', { class: 'yes' }, 'pending arrival count == 0   ✓'),
      h('li', { class: 'yes' }, 'tx-count == 0   ✓'));
    setText(momentFlip, `So the phase flipped: phase ${f.from} (parity ${f.from & 1}) → phase ${f.to} (parity ${f.to & 1}), and the pending count was refilled to ${f.expected} for the new phase. A try_wait.parity(${f.from & 1}) now passes.`);
  }

  const renderLog = () => {
    replace(logList, ...log.slice(-12).map((l) => h('li', { class: l.cls }, l.text)));
  };

  function render(): void {
    const valid = b.status === 'valid';
    const word = valid ? encodeWord(b) : null;
    setText(wordHex, word === null ? `0x${'?'.repeat(16)} (${b.status === 'uninit' ? 'not initialized' : 'invalidated'})` : `0x${word.toString(16).padStart(16, '0')}`);
    const vals: Record<FieldId, string> = {
      phase: valid ? String(b.phase & 1) : '—',
      pending: valid ? String(b.pending) : '—',
      expected: valid ? String(b.expected) : '—',
      tx: valid ? `${b.tx} B` : '—',
    };
    for (const [id, f] of fieldBtns) {
      setText(f.val, vals[id]);
      if (id === 'phase' && valid) f.val.appendChild(h('span', { class: 'field-sub' }, `phase ${b.phase}`));
      f.btn.setAttribute('aria-label', `${EXPLAIN[id].title} field: ${id === 'phase' && valid ? `${vals[id]} (phase ${b.phase})` : vals[id]}`);
      f.btn.setAttribute('aria-pressed', String(id === focus));
      f.btn.classList.toggle('focused', id === focus);
    }
    const ex = EXPLAIN[focus];
    setText(explainTitle, `${ex.title} — ${ex.bits}`);
    replace(explainBody, ...ex.text.map((t) => h('p', {}, t)));
    setText(status, trapped
      ? `Trapped: the H200 stops the kernel here (${trapped.code}). Reset to start over.`
      : valid ? `Phase ${b.phase} (parity ${b.phase & 1}): waiting for ${b.pending} of ${b.expected} arrival${b.expected === 1 ? '' : 's'} and ${txWords(b.tx)}.`
        : 'Not initialized: init the barrier first (any other operation is undefined).');
    status.classList.toggle('trapped', !!trapped);
    const pOk = valid && b.pending === 0, tOk = valid && b.tx === 0;
    setText(condPending, `pending arrival count == 0   (now ${valid ? b.pending : '—'})  ${pOk ? '✓' : '✗'}`);
    setText(condTx, `tx-count == 0   (now ${valid ? b.tx : '—'}${valid && b.tx < 0 ? `: ${-b.tx} bytes credited before they were expected` : ''})  ${tOk ? '✓' : '✗'}`);
    condPending.className = pOk ? 'yes' : 'no';
    condTx.className = tOk ? 'yes' : 'no';
    renderMoment();
    setText(condVerdict, !valid ? 'The barrier is not initialized.'
      : pOk && !tOk ? 'All arrivals are in; the phase waits for the remaining bytes.'
        : !pOk && tOk ? `The phase waits for ${b.pending} more arrival${b.pending === 1 ? '' : 's'}.`
          : b.tx < 0
            ? `The phase waits for ${b.pending} arrival${b.pending === 1 ? '' : 's'}; ${-b.tx} bytes were credited before they were expected (complete_tx before expect_tx), so the tx-count must first be raised by an expect_tx of at least that much.`
            : `The phase waits for ${b.pending} arrival${b.pending === 1 ? '' : 's'} and ${b.tx} bytes.`);
    renderLog();
  }

  const el = h('section', { class: 'view mechanism', id: 'view-mechanism', 'aria-labelledby': 'mech-h' },
    h('h2', { id: 'mech-h' }, 'Barrier mechanism'),
    h('p', { class: 'lead' }, 'One mbarrier, as the 64-bit word an H200 keeps. Click a field for its role; apply operations with the buttons. Every operation runs the model’s own function, the one the simulator and the checker run.'),
    h('div', { class: 'mech-grid' },
      h('div', {}, fromRun, word, h('p', { class: 'word-line' }, 'word: ', wordHex), explain, status, cond, waitResult, diagBox),
      h('div', {}, h('h3', {}, 'Operations'), ops, h('h3', {}, 'Log'), logList)));
  render();
  return {
    el,
    showBarrier(x, caption) {
      if (x) {
        if (!own) own = b;
        b = { ...x };
        fromRun.hidden = false;
        setText(fromRun, `${caption ?? 'A barrier of the run'}. Operations below apply to a copy.`);
      } else {
        if (own) b = own;
        own = null;
        fromRun.hidden = true;
      }
      trapped = null;
      flip = null;
      showDiag(null);
      render();
      showWait(false);
    },
  };
}
