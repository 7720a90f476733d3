import { Command, Option } from 'commander';
import { ANONYMOUS } from '../core/auth/auth-service.js';
import { withSimilarSpaces } from '../core/space/similar-spaces.js';
import type { CommandDef, SessionCommand, View } from './command.js';
import { COMMANDS } from './commands/index.js';
import { serve } from './commands/serve.js';
import { openCore, type GlobalOptions, type Session } from './open.js';
import { didYouMean } from '../shared/suggest.js';
import { render } from './output.js';
import { UsageError } from './error-output.js';
import { VERSION } from './version.js';

/** Statuses a command may return that mean it failed (a consolidation reports them rather than throwing). */
const FAILED = new Set(['error', 'partial']);

/**
 * Wraps a command function: open the core, resolve the caller, run, render, close. Errors go up to
 * main's boundary; a result whose status says it failed is rendered, then thrown as CommandFailed.
 * A server (`perRequestCaller`) resolves the caller at each request instead: a bad token must not
 * stop it from starting, and a revocation must reach open sessions.
 */
function action(fn: SessionCommand, view: View = 'fields', options: { perRequestCaller?: boolean } = {}) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const globals = command.optsWithGlobals<GlobalOptions>();
    const opened = await openCore(globals);
    try {
      const caller = options.perRequestCaller ? ANONYMOUS : await opened.resolveCaller();
      const session: Session = { ...opened, caller };
      const result = await (fn as (session: Session, ...rest: unknown[]) => Promise<Record<string, unknown> | null>)(session, ...args.slice(0, -1)).catch(
        // A missing space's error names the spaces near it this caller may see (the hint offers them).
        async (error: unknown) => {
          throw await withSimilarSpaces(opened.core.context, caller, error);
        },
      );
      if (result === null) return; // the command wrote its own output (an archive on stdout)
      const failed = FAILED.has(String(result.status));
      // A failure's message is said once, on stderr (by main); the figures stay on stdout.
      const { message, code, ...figures } = result;
      process.stdout.write(render(failed && !globals.json ? figures : result, globals, view));
      if (failed) throw new CommandFailed(String(message ?? `${String(result.status)} (see above)`), typeof code === 'string' ? code : undefined);
    } finally {
      await opened.close();
    }
  };
}

/**
 * A command that needs no store (setup edits a client's files): run with the global flags, render.
 * Opening the core would create the store's folder, which such a command must not touch.
 */
function storeless(fn: (globals: GlobalOptions, ...args: never[]) => Promise<Record<string, unknown>>, view: View = 'fields') {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const globals = command.optsWithGlobals<GlobalOptions>();
    const result = await (fn as (globals: GlobalOptions, ...rest: unknown[]) => Promise<Record<string, unknown>>)(globals, ...args.slice(0, -1));
    process.stdout.write(render(result, globals, view));
  };
}

/** A command that runs itself with the global flags and writes its own output (connect, version). */
function direct(fn: (globals: GlobalOptions, ...args: never[]) => void | Promise<void>) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    await (fn as (globals: GlobalOptions, ...rest: unknown[]) => void | Promise<void>)(command.optsWithGlobals<GlobalOptions>(), ...args.slice(0, -1));
  };
}

/**
 * `--hook`: a command a client runs as a session starts (`setup claude-code --hooks`) must never
 * stand in its way. Any failure — no store, no space yet, a bad setting — prints nothing and exits 0:
 * the session starts without the memory rather than with an error in its context.
 */
function hookable(run: (...args: unknown[]) => Promise<void>) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    if (!command.opts<{ hook?: boolean }>().hook) return run(...args);
    try {
      await run(...args);
    } catch {
      // nothing on stdout (it would become the session's context), exit 0
    }
  };
}

/** A command that ran and rendered its result, which says it failed: exit 1, nothing more to print. */
export class CommandFailed extends Error {
  override readonly name = 'CommandFailed';
  constructor(
    message: string,
    /** The error code the result carries, for the hint under the message. */
    readonly code?: string,
  ) {
    super(message);
  }
}

export function buildProgram(): Command {
  const program = new Command('live-mem')
    .description('Shared, persistent working memory for AI agents. With no command, serves MCP on stdio.')
    .version(VERSION, '-V, --version', 'print the version (also -v, or `live-mem version`)')
    .option('--config <file>', 'settings file (default: live-mem.yaml in the home folder, if present)')
    .option('--home <dir>', 'root folder of the local store (env LIVE_MEM_HOME, default ~/.live-mem)')
    .addOption(new Option('--storage <driver>', 'storage driver (env LIVE_MEM_STORAGE)').choices(['fs', 's3']))
    .option('--agent <name>', 'agent name written on notes (env LIVE_MEM_AGENT, default the OS user)')
    .option('--json', 'machine-readable output: the same JSON the MCP tools return')
    .option('--token <token>', 'act with this token (prefer env LIVE_MEM_TOKEN or --token-file: `ps` shows arguments); default: the local owner')
    .option('--token-file <file>', 'act with the token this file holds (keep it chmod 600)')
    .option('-q, --quiet', 'no progress display (shown on stderr, and only when it is a terminal)')
    .option(
      '--tools <list>',
      'MCP tools `serve` offers: agent, standard, all, admin, or tool names, comma-separated (env LIVE_MEM_TOOLS; default all, agent over HTTP)',
    )
    .helpCommand('help [command]', 'show the help of live-mem or of a command (as --help)')
    .action(action(serve, 'fields', { perRequestCaller: true }));

  const examples = new Map<Command, string[]>();
  for (const def of COMMANDS) addCommand(program, def, examples);

  const names = program.commands.map((command) => command.name());
  // Usage errors reach main's boundary as one line with the help to see; commander prints nothing of its own.
  for (const command of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    const path = [...(command.parent?.parent ? [command.parent.name()] : []), ...(command.parent ? [command.name()] : [])];
    const help = ['live-mem', ...path, '--help'].join(' ');
    command
      .exitOverride((error) => {
        if (error.exitCode === 0 || error.code === 'commander.help') throw error;
        // The bare program serves MCP and takes no argument: a word it does not know is a mistyped command.
        const what =
          error.code === 'commander.excessArguments' && command === program
            ? `unknown command '${command.args[0]}'${didYouMean(String(command.args[0]), names)}`
            : error.message.replace(/^error: /, '');
        throw new UsageError(`${what} (see \`${help}\`)`);
      })
      .configureOutput({ writeErr: (text) => process.stderr.write(text), outputError: () => undefined });
    if (command === program) continue;
    // The global options are listed once, in the top-level help; a command's help shows its own and an example.
    const example = examples.get(command);
    command.addHelpText(
      'after',
      `${example ? `\nExample:\n${example.map((line) => `  $ ${line}`).join('\n')}\n` : ''}\nGlobal options (--json, --home, --token, --agent, -q…): see \`live-mem --help\`.\n`,
    );
  }
  return program;
}

/** Adds `def` (and its own commands) to `parent`, as commander has it; its examples go into `examples`, shown at the end of its help. */
function addCommand(parent: Command, def: CommandDef, examples: Map<Command, string[]>): void {
  const command = parent.command(def.name).description(def.description);
  for (const option of def.options ?? []) {
    const built = new Option(option.flags, option.description);
    if (option.choices) built.choices(option.choices);
    if (option.parse) built.argParser(option.parse);
    if (option.default !== undefined) built.default(option.default);
    if (option.required) built.makeOptionMandatory();
    command.addOption(built);
  }
  if (def.help) command.addHelpText('after', def.help);
  if (def.examples) examples.set(command, def.examples);
  const view = def.view ?? 'fields';
  if (def.run) {
    const run = action(def.run, view, { perRequestCaller: def.server === true });
    command.action(def.hook ? hookable(run) : run);
  } else if (def.storeless) command.action(storeless(def.storeless, view));
  else if (def.direct) command.action(direct(def.direct));
  for (const sub of def.commands ?? []) addCommand(command, sub, examples);
}
