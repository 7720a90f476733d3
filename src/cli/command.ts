import { InvalidArgumentError } from 'commander';
import { hostList } from '../config/values.js';
import type { GlobalOptions, Session } from './open.js';
import type { render } from './output.js';

/** How a command's result is rendered as text (output.ts); `--json` prints it as it is. */
export type View = Parameters<typeof render>[2];

/** A command run on the session program.ts opens for it: the core and the caller. `null`: it wrote its own output. */
export type SessionCommand = (session: Session, ...args: never[]) => Promise<Record<string, unknown> | null>;

/** An option as commander takes it: its flags and help, and how its value is read. */
export interface OptionDef {
  /** `-n, --limit <n>` */
  flags: string;
  description: string;
  /** Reads the value; throws InvalidArgumentError on a bad one. */
  parse?: (value: string) => unknown;
  default?: unknown;
  choices?: readonly string[];
  /** The option must be given (commander's requiredOption). */
  required?: boolean;
}

/**
 * A CLI command as data, as the MCP tools are (mcp/tool.ts): its name and arguments, its help and
 * options, and what runs it. Each module of commands/ defines its own beside its functions;
 * commands/index.ts lists them in the order `live-mem --help` shows; program.ts builds commander's
 * program from the list. A group (`space`, `bank`…) has `commands` and nothing to run.
 */
export interface CommandDef {
  /** The name and its arguments, as typed after `live-mem` or the group's name: `create <space_id>`. */
  name: string;
  description: string;
  options?: OptionDef[];
  /** Text shown after the options in its --help. */
  help?: string;
  /** Examples shown at the end of its --help, for the commands people start with. */
  examples?: string[];
  /** A group's commands, or a command's own (`setup model`). */
  commands?: CommandDef[];
  /** Runs it on a session (program.ts `action`): opens the core, resolves the caller, renders, closes. */
  run?: SessionCommand;
  /** How its result is rendered; default `fields`. */
  view?: View;
  /** A server: the caller is resolved at each request, never once at the start (serve, ui). */
  server?: boolean;
  /** Takes `--hook`: any failure then prints nothing and exits 0 (program.ts `hookable`). */
  hook?: boolean;
  /** Runs without a store, with the global flags (setup edits a client's files); its result rendered. */
  storeless?: (globals: GlobalOptions, ...args: never[]) => Promise<Record<string, unknown>>;
  /** Runs with the global flags and writes its own output (connect, version). */
  direct?: (globals: GlobalOptions, ...args: never[]) => void | Promise<void>;
}

/** An integer option. */
export const integer = (value: string): number => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new InvalidArgumentError('not an integer');
  return parsed;
};

/** --allowed-hosts: checked as LIVE_MEM_ALLOWED_HOSTS is. */
export const hosts = (value: string): string[] => {
  try {
    return hostList(value, '--allowed-hosts');
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
};

/** `--reason` and `--secret`, as every correction of the bank (a revision) takes them. */
export const REASON: OptionDef = { flags: '--reason <text>', description: 'why, kept in history' };
export const SECRET: OptionDef = {
  flags: '--secret',
  description: 'what this removes was a secret: history keeps the earlier text without the removed lines',
};
