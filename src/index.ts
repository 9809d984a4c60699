/**
 * The mbsim library: the one stable entry point of the `mbsim` package (`import … from 'mbsim'`).
 * docs/API.md walks through it; `npm run docs:api` generates the reference from these docstrings.
 *
 * The flow is: a kernel, written as a sketch ({@link parseSketch}), with the TypeScript builder
 * ({@link kernel}) or read from PTX ({@link parsePtx}, then {@link translatePtx} for a launch), is instantiated with parameter values into a {@link Program}
 * ({@link instantiate}), which the timed simulator ({@link simulate}) runs along one schedule and
 * the exhaustive checker ({@link check}) explores along every schedule. {@link decodeWord} and
 * {@link explainWord} read raw 64-bit mbarrier words. Everything else in the package's folders is
 * internal and may change between versions.
 *
 * ```ts
 * import { parseSketch, instantiate, simulate, check } from 'mbsim';
 * const { kernel, diagnostics } = parseSketch(source, 'pipe.mbk');
 * if (!kernel) throw new Error(diagnostics.map((d) => d.message).join('\n'));
 * const program = instantiate(kernel, { S: 2 });
 * simulate(program).verdict;   // 'ok' | 'hang' | 'trap' | 'error' | 'incomplete'
 * check(program).hazards;      // [] when no schedule reaches a hazard
 * ```
 */

// Front ends: the sketch language and the TypeScript builder, both producing the kernel IR.
export { parseSketch, formatDiagnostic, MAX_DIAGNOSTICS, SKETCH_CODES, type SketchResult, type SketchDiagnostic, type SketchCode } from './lang/index.js';
export { kernel, KernelBuilder, ProgramBuilder, BuildError, type KernelOpts, type RoleOpts, type ArriveOpts } from './kernel/builder.js';
export type { Kernel, Arch, SrcLoc, Op, Stmt, Expr, Per, BarrierDecl, BufferDecl, RoleDecl, ParamDecl } from './kernel/ir.js';
// The PTX front end: PTX text (as nvcc writes it) parsed, then translated for a launch into the same kernel IR (docs/PTX.md).
export { parsePtx, PTX_CODES, type PtxParse, type PtxDiagnostic, type PtxCode, type Module as PtxModule } from './ptx/index.js';
export { translatePtx, type PtxLaunch, type PtxStats } from './ptxi/index.js';

// The kernel instantiated with parameter values, and the machine that steps it.
export { instantiate, KernelError, MAX_CTAS, MAX_SMEM_PER_CTA, MAX_THREADS_PER_CTA, type Program, type AgentInfo, type BarrierInfo, type BufferInfo } from './machine/program.js';
export { Machine, cloneState, type MachineState, type Choice } from './machine/machine.js';
export type { MachineEvent, EventKind } from './machine/events.js';

// The mbarrier object and its 64-bit word.
export { decodeWord, encodeWord, decodeToken, type DecodedWord } from './model/encoding.js';
export type { MBarrier } from './model/mbarrier.js';
export type { Diagnostic, Severity } from './model/diagnostics.js';

// One timed schedule.
export { simulate, type SimOptions, type SimResult, type SimVerdict, type SimStats, type Span } from './sim/simulate.js';
export { H200, mergeTiming, TimingError, type Timing } from './sim/timing.js';

// Every schedule.
export { check, replay, type CheckOptions, type CheckResult, type Hazard, type TraceStep, type BarrierSnapshot } from './check/check.js';
export { checkJson, checkSarif, renderCheck } from './check/report.js';
export { HAZARD_TEXT, HAZARD_FIX } from './check/kinds.js';

// Reports over a run's events.
export { buildLedger, type Ledger, type LedgerPhase, type LedgerArrival, type LedgerWait, type ReportCut } from './report/ledger.js';
export { renderTimeline, renderEventLog, renderLedger, renderSummary } from './report/text.js';
export { buildTrace } from './report/trace.js';
export { explainWord, DecodeError, type Decoded } from './report/decode.js';
export { phaseTable, renderPhaseTable, mergePhaseRows, type PhaseRow, type PhaseLine, type MergedPhaseRows, type PhaseTableOptions } from './report/phases.js';

// The built-in example kernels.
export { EXAMPLES, findExample, type Example } from './examples/index.js';
