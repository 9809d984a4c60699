/**
 * The hint after `unknown option '--X'`: an option of the same verb only when it is a plausible typo
 * (edit distance, `kernel/nearest.ts`), the verb's option for a common name of the same bound
 * (`--max-seconds` → `--timeout`), and the verbs that do have the option when the verb does not
 * (`run --format`: `--format is an option of check, not of run`). commander's own suggestion is
 * looser (it offered `--omit` for `--format`) and knows only the verb's options.
 */
import { Command } from 'commander';
import { didYouMean } from '../kernel/nearest.js';

/** Names people reach for → mbsim's option for that bound (used only where the verb has the target). */
export const OPTION_ALIASES: Readonly<Record<string, string>> = {
  '--max-seconds': '--timeout',
  '--max-time': '--timeout',
  '--time-limit': '--timeout',
  '--timelimit': '--timeout',
  '--seconds': '--timeout',
  '--max-mem': '--max-memory',
  '--memory': '--max-memory',
  '--mem': '--max-memory',
  '--memory-limit': '--max-memory',
  '--max-rss': '--max-memory',
  '--states': '--max-states',
  '--state-limit': '--max-states',
  '--steps': '--max-steps',
};

/**
 * The hint for the unknown option `flag` (as typed; a `=VALUE` is ignored) of `verb` (undefined:
 * the top level), given the long options of that verb (`own`) and of the others (verb → options).
 * Empty when nothing is worth saying; otherwise a line break and a parenthesised sentence, in
 * commander's layout.
 */
export function unknownOptionHint(flag: string, verb: string | undefined, own: readonly string[], others: ReadonlyMap<string, readonly string[]>): string {
  if (!flag.startsWith('--')) return '';
  const name = flag.split('=')[0]!;
  const parts: string[] = [];
  const elsewhere = [...others].filter(([v, longs]) => v !== verb && longs.includes(name)).map(([v]) => v);
  if (elsewhere.length) parts.push(`${name} is an option of ${elsewhere.length > 1 ? `${elsewhere.slice(0, -1).join(', ')} and ${elsewhere.at(-1)!}` : elsewhere[0]!}${verb ? `, not of ${verb}` : ''}`);
  const alias = OPTION_ALIASES[name.toLowerCase()];
  const strip = (s: string) => s.replace(/^--/, '');
  const near = alias !== undefined && own.includes(alias) ? alias : didYouMean(strip(name), own.map(strip));
  if (near !== undefined) parts.push(`did you mean ${near.startsWith('--') ? near : `--${near}`}?`);
  if (!parts.length) return '';
  const text = parts.join('; ');
  return `\n(${text[0]!.toUpperCase()}${text.slice(1)})`;
}

/** The long options commander lists for `cmd` (hidden ones left out, as in its help). */
function longsOf(cmd: Command): string[] {
  return cmd.createHelp().visibleOptions(cmd).map((o) => o.long).filter((l): l is string => l !== undefined);
}

/**
 * commander's `Command` with {@link unknownOptionHint} as the message of an unknown option. `verbs`
 * registers every verb on a scratch program, called only when an option is unknown (a start
 * registers only the verb it runs).
 */
export class MbsimCommand extends Command {
  constructor(name: string | undefined, private readonly verbs: (scratch: Command) => void) {
    super(name);
  }

  /** Subcommands (the verbs) are built the same way. */
  override createCommand(name?: string): Command {
    return new MbsimCommand(name, this.verbs);
  }

  /** commander's hook for an option the command lacks (not in its typings; called by `parseOptions`). */
  unknownOption(flag: string): void {
    if ((this as unknown as { _allowUnknownOption?: boolean })._allowUnknownOption) return;
    const scratch = new Command();
    this.verbs(scratch);
    const others = new Map(scratch.commands.map((c) => [c.name(), longsOf(c)] as const));
    const verb = this.parent ? this.name() : undefined;
    const hint = unknownOptionHint(flag, verb, longsOf(this), others);
    this.error(`error: unknown option '${flag}'${hint}`, { code: 'commander.unknownOption' });
  }
}
