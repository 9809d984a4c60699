/**
 * SARIF 2.1.0 of a {@link CheckResult}, for code-review tools (GitHub code scanning, editors'
 * SARIF viewers). Locations are relative to the source root, `%SRCROOT%` (the directory the check
 * ran in unless `srcRoot` says otherwise), which `originalUriBaseIds` maps to an absolute
 * `file://` URI; a file outside that root keeps an absolute `file://` URI. One rule per finding
 * kind whose description and help say what the hazard means and how it is fixed (src/check/kinds.ts
 * `HAZARD_TEXT`, `HAZARD_FIX`), whole without any link; the tool's `informationUri` and each rule's
 * `helpUri` (docs/CHECK.md's hazard table) are added when the package names its home page or repository.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { CheckResult, Hazard } from './check.js';
import { HAZARD_FIX, HAZARD_TEXT } from './kinds.js';
import { SEARCH_CAUSES } from './cause-static.js';
import { H200_BEHAVIOUR } from '../model/diagnostics.js';
import { addCudaLocations, type SarifLog } from './sarif-cuda.js';
import { argError, isRecord, objectArg } from '../model/api-args.js';

/** Options of {@link checkSarif}. */
export interface SarifOptions {
  /** `tool.driver.version` (default: unknown, omitted). */
  toolVersion?: string;
  /**
   * The repository's web address (package.json `repository`), e.g. `https://github.com/o/mbsim`:
   * `informationUri` and each rule's `helpUri` (docs/CHECK.md on its default branch) point
   * there. Absent: both are omitted, never invented.
   */
  repositoryUrl?: string;
  /**
   * The project's home page (package.json `homepage`): the tool's `informationUri` when given (else
   * the repository's address). Absent with no repository: omitted.
   */
  homepageUrl?: string;
  /** Absolute directory `%SRCROOT%` stands for (default `process.cwd()`). */
  srcRoot?: string;
}

/** The base id of relative artifact URIs. */
export const SRCROOT = '%SRCROOT%';

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/** An artifact location: relative to `root` under {@link SRCROOT}, or an absolute file URI. */
export function artifactLocation(file: string, root: string): { uri: string; uriBaseId?: string } {
  const base = root.endsWith('/') ? root : `${root}/`;
  if (!file.startsWith('/')) return { uri: encodePath(file.replace(/^\.\//, '')), uriBaseId: SRCROOT };
  if (file.startsWith(base)) return { uri: encodePath(file.slice(base.length)), uriBaseId: SRCROOT };
  return { uri: `file://${encodePath(file)}` };
}

/** A repository address from package.json's `repository` field (a string or `{ url }`), as https. */
export function repositoryWebUrl(repository: unknown): string | undefined {
  const raw = typeof repository === 'string' ? repository : (repository as { url?: unknown } | null)?.url;
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  let url = raw.trim().replace(/^git\+/, '').replace(/\.git$/, '');
  if (/^github:/.test(url)) url = `https://github.com/${url.slice(7)}`;
  else if (/^[\w.-]+\/[\w.-]+$/.test(url)) url = `https://github.com/${url}`;
  else if (/^git@([^:]+):(.+)$/.test(url)) url = url.replace(/^git@([^:]+):(.+)$/, 'https://$1/$2');
  else url = url.replace(/^git:\/\//, 'https://');
  return /^https?:\/\//.test(url) ? url.replace(/\/$/, '') : undefined;
}

/** The GitHub-style anchor of a docs/CHECK.md hazard table row: the table sits under "Hazards". */
function helpUri(repo: string): string {
  return `${repo}/blob/main/docs/CHECK.md#hazards`;
}

/** A rule's meaning and fix: the kind's sentences (src/check/kinds.ts), or a model code's H200 behaviour. */
export function ruleHelp(kind: string): { meaning: string; fix: string } {
  const meaning = HAZARD_TEXT[kind];
  if (meaning) return { meaning, fix: HAZARD_FIX[kind] ?? 'The finding\'s message and trace say which operations meet; change the protocol so the schedule cannot occur.' };
  const h200 = (H200_BEHAVIOUR as Record<string, { h200: string } | undefined>)[kind]?.h200;
  return {
    meaning: `A barrier or memory operation the PTX ISA leaves undefined, or a rule the machine enforces (model diagnostic ${kind}); the finding's message says which operation and the barrier's state before it.${h200 ? ` On the H200: ${h200}.` : ''}`,
    fix: 'Change the operation the finding points at (or the code that reaches it) so that this case cannot occur in any schedule: the trace shows the steps that lead there.',
  };
}

/** Markdown's special characters in plain text, escaped (the help's sentences use few). */
const mdEscape = (t: string) => t.replace(/([\\`*_[\]<>])/g, '\\$1');

/**
 * The rule of a finding kind, self-contained: `fullDescription` and `help` (text and markdown)
 * say what the hazard means and how it is fixed, so a code-scanning tool shows them with no link
 * to follow; `helpUri` (docs/CHECK.md's hazard table) only when the package names its repository.
 */
function ruleOf(kind: string, repo: string | undefined) {
  const { meaning, fix } = ruleHelp(kind);
  const doc = repo ? helpUri(repo) : undefined;
  return {
    id: kind,
    name: kind,
    shortDescription: { text: meaning },
    fullDescription: { text: `${meaning} Fix: ${fix}` },
    help: {
      text: `${meaning}\n\nFix: ${fix}${doc ? `\n\nMore: ${doc} (row ${kind})` : ''}`,
      markdown: `**\`${kind}\`**: ${mdEscape(meaning)}\n\n**Fix:** ${mdEscape(fix)}${doc ? `\n\nMore: [docs/CHECK.md, Hazards](${doc}), row \`${kind}\`.` : ''}`,
    },
    ...(doc ? { helpUri: doc } : {}),
  };
}

/**
 * SARIF 2.1.0 log of the hazards (errors as `error`, warnings as `warning`). For a PTX kernel with
 * `.loc` lines (nvcc -lineinfo), each result also cites the CUDA lines of its PTX lines and the
 * call sites they were inlined at (./sarif-cuda.ts; PTX ISA §11.4 `.loc`): `check --sarif` writes
 * this log as it is.
 */
export function checkSarif(r: CheckResult, opts: SarifOptions = {}): unknown {
  if (!isRecord(r) || !Array.isArray(r.hazards) || !Array.isArray(r.warnings) || !isRecord(r.program)) argError('checkSarif', 'result', 'a CheckResult (from check)', r);
  objectArg('checkSarif', 'options', opts, true, ['toolVersion', 'repositoryUrl', 'homepageUrl', 'srcRoot']);
  const root = opts.srcRoot ?? (typeof process !== 'undefined' ? process.cwd() : '/');
  const all: Hazard[] = [...r.hazards, ...r.warnings];
  const kinds = [...new Set(all.map((h) => h.kind))];
  const kernelFile = r.program.kernel.file;
  const physical = (loc: SrcLoc) => ({
    physicalLocation: {
      artifactLocation: loc.file ? artifactLocation(loc.file, root) : kernelFile ? artifactLocation(kernelFile, root) : { uri: 'kernel' },
      region: { startLine: Math.max(1, loc.line), startColumn: Math.max(1, loc.col), ...(loc.endCol ? { endColumn: loc.endCol } : {}) },
    },
  });
  const rootUri = `file://${encodePath(root.endsWith('/') ? root : `${root}/`)}`;
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{
      tool: {
        driver: {
          name: 'mbsim check',
          ...(opts.toolVersion ? { version: opts.toolVersion } : {}),
          ...(opts.homepageUrl ?? opts.repositoryUrl ? { informationUri: opts.homepageUrl ?? opts.repositoryUrl } : {}),
          rules: kinds.map((k) => ruleOf(k, opts.repositoryUrl)),
        },
      },
      originalUriBaseIds: { [SRCROOT]: { uri: rootUri } },
      results: all.map((h) => ({
        ruleId: h.kind,
        ruleIndex: kinds.indexOf(h.kind),
        level: h.severity === 'error' ? 'error' : 'warning',
        message: { text: h.cause ? `${h.message} (root cause, ${SEARCH_CAUSES.has(h.cause.kind) ? '' : 'static '}${h.cause.kind}: ${h.cause.message})` : h.race ? `${h.message} (fix: ${h.race.fix})` : h.message },
        locations: (h.locations.length ? h.locations : h.trace.slice(-1).flatMap((s) => (s.loc ? [s.loc] : []))).slice(0, 1).map(physical),
        relatedLocations: [...h.locations.slice(1), ...(h.also?.locations ?? [])].map((l, i) => ({ id: i + 1, ...physical(l) })),
        codeFlows: h.trace.length ? [{
          threadFlows: [{
            locations: h.trace.map((s) => ({
              location: { ...(s.loc ? physical(s.loc) : {}), message: { text: `${s.n}. ${s.actor}: ${s.op}` } },
            })),
          }],
        }] : [],
        properties: { subject: h.subject, kernel: r.program.kernel.name, params: r.program.params, ...(h.cause ? { cause: h.cause } : {}), ...(h.race ? { release: h.race.release, fix: h.race.fix } : {}) },
      })),
      invocations: [{
        executionSuccessful: true,
        // An incomplete search says so where SARIF readers look: a notification with the reason.
        toolExecutionNotifications: !r.complete && r.stoppedBy !== 'hazard' ? [{
          level: 'warning',
          descriptor: { id: 'incomplete' },
          message: { text: incompleteText(r) },
          properties: { stoppedBy: r.stoppedBy, states: r.coverage.states },
        }] : [],
      }],
      properties: { verdict: r.verdict, complete: r.complete, coverage: r.coverage },
    }],
  };
  addCudaLocations(log as SarifLog, r.program.kernel, (file) => artifactLocation(file, root));
  return log;
}

/** Why a search that stopped at a bound is incomplete, and what to do (the SARIF notification). */
function incompleteText(r: CheckResult): string {
  if (r.stoppedBy === 'interrupt') return `the search is incomplete: interrupted after ${r.coverage.states.toLocaleString('en-US')} states; schedules beyond them were not explored`;
  const bound = r.stoppedBy === 'timeout' ? '--timeout' : r.stoppedBy === 'max-memory' ? '--max-memory' : '--max-states';
  return `the search is incomplete: stopped by ${bound} after ${r.coverage.states.toLocaleString('en-US')} states; schedules beyond it were not explored (raise ${bound} or check smaller parameters)`;
}
