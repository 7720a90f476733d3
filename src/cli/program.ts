import { Command, InvalidArgumentError, Option } from 'commander';
import { ANONYMOUS } from '../core/auth/auth-service.js';
import { hostList } from '../config/settings.js';
import { CATEGORIES } from '../core/validate.js';
import { backupCreate, backupDelete, backupDownload, backupList, backupRestore, exportSpace, importSpace } from './commands/backup.js';
import { bankDelete, bankEdit, bankExplain, bankList, bankRead, bankReadAll, bankRevert, bankWrite } from './commands/bank.js';
import { compact } from './commands/compact.js';
import { consolidate, consolidationStatus } from './commands/consolidate.js';
import { doctor } from './commands/doctor.js';
import { INGEST_FORMATS, ingest } from './commands/ingest.js';
import { note, read, search } from './commands/live.js';
import { forget, historyList, historyShow, memoryContext, recall } from './commands/recall.js';
import { serve } from './commands/serve.js';
import { connect } from './commands/connect.js';
import { CLIENTS, type SetupOptions, setup } from './commands/setup.js';
import { type ModelOptions, setupModel } from './commands/setup-model.js';
import { spend } from './commands/spend.js';
import { ui } from './commands/ui.js';
import { about, health, whoami } from './commands/system.js';
import { tokenCreate, tokenDelete, tokenList, tokenRevoke, tokenUpdate } from './commands/token.js';
import { spaceCreate, spaceDelete, spaceInfo, spaceList, spaceRules, spaceSummary, spaceUpdate, spaceUpdateRules } from './commands/space.js';
import { summariesList, summariesShow, summariesStatus, summariesUpdate } from './commands/summaries.js';
import { openCore, type GlobalOptions, type Session } from './open.js';
import { didYouMean } from '../shared/suggest.js';
import { render, UsageError } from './output.js';
import { VERSION } from './version.js';

type View = Parameters<typeof render>[2];
type CommandFn = (session: Session, ...args: never[]) => Promise<Record<string, unknown> | null>;

/** Statuses a command may return that mean it failed (a consolidation reports them rather than throwing). */
const FAILED = new Set(['error', 'partial']);

/**
 * Wraps a command function: open the core, resolve the caller, run, render, close. Errors go up to
 * main's boundary; a result whose status says it failed is rendered, then thrown as CommandFailed.
 * A server (`perRequestCaller`) resolves the caller at each request instead: a bad token must not
 * stop it from starting, and a revocation must reach open sessions.
 */
function action(fn: CommandFn, view: View = 'fields', options: { perRequestCaller?: boolean } = {}) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const globals = command.optsWithGlobals<GlobalOptions>();
    const opened = await openCore(globals);
    try {
      const caller = options.perRequestCaller ? ANONYMOUS : await opened.resolveCaller();
      const session: Session = { ...opened, caller };
      const result = await (fn as (session: Session, ...rest: unknown[]) => Promise<Record<string, unknown> | null>)(session, ...args.slice(0, -1));
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

const integer = (value: string): number => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new InvalidArgumentError('not an integer');
  return parsed;
};

/** --allowed-hosts: checked as LIVE_MEM_ALLOWED_HOSTS is. */
const hosts = (value: string): string[] => {
  try {
    return hostList(value, '--allowed-hosts');
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
};
const ALLOWED_HOSTS_HELP =
  'Host names clients reach this server by (memory.example.com, name:port), comma-separated (env LIVE_MEM_ALLOWED_HOSTS; off loopback, default any; * = any, with auth required)';
const TRUST_PROXY_HELP = 'behind a reverse proxy: use X-Forwarded-Host and X-Forwarded-For (env LIVE_MEM_TRUST_PROXY); never when clients connect directly';

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
    .option('--tools <list>', 'MCP tools `serve` offers: agent, standard, all, admin, or tool names, comma-separated (env LIVE_MEM_TOOLS, default all)')
    .helpCommand('help [command]', 'show the help of live-mem or of a command (as --help)')
    .action(action(serve, 'fields', { perRequestCaller: true }));

  program
    .command('serve')
    .description('serve MCP on stdio (what MCP clients launch; same as no command), or over Streamable HTTP')
    .option('--http', 'serve Streamable HTTP at /mcp instead of stdio; every request needs Authorization: Bearer')
    .option('--host <host>', 'address to bind (default 127.0.0.1: loopback only; another address needs LIVE_MEM_AUTH=required)')
    .option('--port <port>', 'port to listen on (default 8080; 0 = any free port)', integer)
    .option('--allowed-hosts <list>', ALLOWED_HOSTS_HELP, hosts)
    .option('--trust-proxy', TRUST_PROXY_HELP)
    .action(action(serve, 'fields', { perRequestCaller: true }));

  program
    .command('ui')
    .description('serve the web viewer: watch spaces live, read the bank, history, summaries, search')
    .option(
      '--host <host>',
      'address to bind (default 127.0.0.1: loopback only, the printed URL carries a secret unless auth is required; another address needs LIVE_MEM_AUTH=required)',
    )
    .option('--port <port>', 'port to listen on (default 8090; 0 = any free port)', integer)
    .option('--open', 'open the page in the system browser')
    .option('--allowed-hosts <list>', ALLOWED_HOSTS_HELP, hosts)
    .option('--trust-proxy', TRUST_PROXY_HELP)
    .action(action(ui, 'fields', { perRequestCaller: true }));

  const space = program.command('space').description('create, inspect and delete memory spaces');
  space
    .command('create <space_id>')
    .description('create a space (with the standard memory-bank rules unless given others)')
    .option('-d, --description <text>', 'what the space is for')
    .option('--owner <name>', 'who owns it (informative)')
    .option('--rules <markdown>', 'the rules, inline')
    .option('--rules-file <file>', 'the rules, from a Markdown file')
    .action(action(spaceCreate, 'fields'));
  space.command('list').description('list spaces').action(action(spaceList, 'spaces'));
  space.command('info <space_id>').description('details of a space').action(action(spaceInfo, 'spaceFields'));
  space.command('rules <space_id>').description('print the rules of a space').action(action(spaceRules, 'content'));
  space.command('summary <space_id>').description('info, rules, synthesis and bank in one').action(action(spaceSummary, 'spaceFields'));
  space
    .command('update <space_id>')
    .description("change the description, the owner or the space's daily model-token cap")
    .option('-d, --description <text>', 'new description')
    .option('--owner <name>', 'new owner')
    .option(
      '--llm-daily-tokens <n>',
      'model tokens the space may spend per UTC day: a writer may only lower the cap in force, an admin set any (0 = no cap for it)',
      integer,
    )
    .action(action(spaceUpdate, 'fields'));
  space
    .command('update-rules <space_id> [file]')
    .description('replace the rules (from a file, or standard input), recorded in history as a revision (admin)')
    .option('--if-match <version>', 'the version the rules had when you read them (`live-mem space rules ID --json`)')
    .option('--reason <text>', 'why, kept in history')
    .option('--secret', 'what this removes was a secret: history keeps the earlier text without the removed lines')
    .addHelpText(
      'after',
      '\nExample:\n  live-mem space update-rules my-project rules.md --if-match "$(live-mem space rules my-project --json | jq -r .version)" --reason "add a budget"',
    )
    .action(action(spaceUpdateRules, 'fields'));
  space
    .command('delete <space_id>')
    .description('delete a space and all its data (irreversible)')
    .option('-y, --yes', 'confirm the deletion')
    .action(action(spaceDelete, 'fields'));

  program
    .command('note <space_id> [content...]')
    .description('write a live note (content from the arguments, or standard input when absent or "-")')
    .addOption(new Option('-c, --category <category>', 'note category').choices(CATEGORIES).default('observation'))
    .option('-t, --tags <tags>', 'comma-separated tags')
    .option('--as <agent>', 'sign as this agent name (default: --agent / LIVE_MEM_AGENT)')
    .action(
      action(
        (opened, spaceId: string, words: string[], options: { category: string; tags?: string; as?: string }) =>
          note(opened, spaceId, words, {
            category: options.category,
            ...(options.tags !== undefined ? { tags: options.tags } : {}),
            ...(options.as !== undefined ? { agent: options.as } : {}),
          }),
        'written',
      ),
    );

  program
    .command('ingest <space_id> [source]')
    .description(
      'write notes with their original times from JSON lines (a file, or standard input when absent or "-"), a memory.jsonl or a folder of Markdown notes; create-only, so running it again writes nothing twice (owner or admin)',
    )
    .addOption(new Option('--from <format>', 'what the source is').choices(INGEST_FORMATS).default('jsonl'))
    .option('--timestamp <datetime>', "--from mcp-memory: the time of every entity (default: the file's modification time)")
    .option('--dry-run', 'check everything and show what would be written; write nothing')
    .action(action(ingest, 'ingest'));

  program
    .command('read <space_id>')
    .description('read the newest live notes')
    .option('-n, --limit <n>', 'most notes to show (1-1000)', integer, 50)
    .option('-c, --category <category>', 'only this category')
    .option('--from <agent>', 'only notes by this agent')
    .option('--since <datetime>', 'only notes from this ISO 8601 date-time on')
    .option('--before <filename>', 'only notes older than this one (the next page)')
    .action(
      action(
        (opened, spaceId: string, options: { limit: number; category?: string; from?: string; since?: string; before?: string }) =>
          read(opened, spaceId, {
            limit: options.limit,
            ...(options.category !== undefined ? { category: options.category } : {}),
            ...(options.from !== undefined ? { agent: options.from } : {}),
            ...(options.since !== undefined ? { since: options.since } : {}),
            ...(options.before !== undefined ? { before: options.before } : {}),
          }),
        'notes',
      ),
    );

  program
    .command('search <space_id> <query>')
    .description('find live notes containing a text (case-insensitive)')
    .option('-n, --limit <n>', 'most notes to show (1-1000)', integer, 20)
    .action(action(search, 'notes'));

  program
    .command('recall <space_id> <query...>')
    .description('ranked search over every level: live and consolidated notes, bank sections, synthesis, summaries')
    .option('-n, --limit <n>', 'most results (1-100)', integer, 10)
    .option('--levels <list>', 'only these levels, e.g. 0 (notes) or 1,2 (summaries)')
    .option('--sources <list>', 'only these sources: live,history,bank,bank_history,synthesis,summary')
    .option('-c, --category <category>', 'only notes of this category')
    .option('--from <agent>', 'only notes by this agent')
    .option('--since <datetime>', 'from this ISO 8601 date-time on')
    .option('--until <datetime>', 'up to this ISO 8601 date-time')
    .action(action(recall, 'hits'));

  program
    .command('context <space_id> [query...]')
    .description(
      "the memory an agent should load now, within a token budget (recent notes, search hits, summaries); `.` is the project's own space (LIVE_MEM_SPACE, else the project of the working folder)",
    )
    .option('--max-tokens <n>', 'token budget (200-200000)', integer, 4000)
    .option('--hook', 'for a session-start hook (setup claude-code --hooks): print the context alone, and nothing at all (exit 0) on any failure')
    .action(hookable(action(memoryContext, 'context')));

  program
    .command('forget <space_id> [refs...]')
    .description(
      'remove notes for good (note file names, or --query) from live/, history, summaries and the search index, with a receipt; a dry run without --yes (admin)',
    )
    .option('-q, --query <text>', 'instead of file names: forget the notes this finds (live and consolidated)')
    .option('-n, --limit <n>', 'with --query: at most this many notes (1-100)', integer, 20)
    .option('-y, --yes', 'forget them (without it: a dry run, nothing changed)')
    .option('--purge-backups', "also rewrite the space's backups without them (files and manifest checksums)")
    .option('--reason <text>', 'why, kept in history')
    .addHelpText(
      'after',
      '\nExample:\n  live-mem forget my-project 20260220T180000_alice_observation_1a2b3c4d.md --reason "leaked a customer name"\n  live-mem forget my-project --query "customer acme" --yes',
    )
    .action(action(forget, 'forget'));

  const history = program.command('history').description('consolidations and the notes they moved out of live/, compactions and the text they rewrote');
  history
    .command('list <space_id>')
    .description('consolidations and compactions, newest first')
    .option('-n, --limit <n>', 'most consolidations (1-1000)', integer, 20)
    .option('--before <consolidation_id>', 'continue after this one')
    .action(action(historyList, 'history'));
  history
    .command('show <space_id> <consolidation_id>')
    .description('one consolidation and its notes, or a compaction and its pre-images')
    .action(action(historyShow, 'historyEntry'));

  program
    .command('consolidate <space_id>')
    .description('fold the live notes into the memory bank with the configured LLM (progress on a terminal)')
    // Not --agent: that is the global option (the name notes are signed with), which took the word
    // before this command's filter ever saw it.
    .option('--only-agent <name>', "only this agent's notes (exact name)")
    .action(action(consolidate, 'consolidation'));
  program
    .command('spend <space_id>')
    .description('model tokens the space spent (consolidation, compaction, summaries, synthesis, embeddings), per purpose and per UTC day')
    .option('--since <date>', 'from this day (ISO 8601; default: the last 30 days, at most 366)')
    .action(action(spend, 'spend'));
  program
    .command('compact <space_id>')
    .description('rewrite the older sections of bank files over their budget as digests (guarded; pre-images kept in history)')
    .option('--file <name>', 'only this bank file')
    .option('--dry-run', 'ask the model and check its digests, but write nothing')
    .action(action(compact, 'compaction'));
  program
    .command('consolidate-status <space_id> [job_id]')
    .description('state of background consolidations (started by MCP clients), newest first')
    .action(action(consolidationStatus, 'fields'));

  const summaries = program.command('summaries').description('hierarchical summaries of a space: level 1 over notes, higher levels over summaries');
  summaries
    .command('update <space_id>')
    .description('bring the summaries up to date with the configured LLM (progress on a terminal)')
    .option('--full', 'recompute every level from scratch (reusing summaries that did not change)')
    .option('--level <n>', 'highest level to build (1-6)', integer)
    .option('--window-chars <n>', 'note characters per level-1 window (default 6000)', integer)
    .option('--min-flush-chars <n>', 'smallest last window summarised (default half a window)', integer)
    .option('--group-chars <n>', 'summary characters per group (default 10000)', integer)
    .option('--wiggle <x>', 'size tolerance, 0-0.5 (default 0.2)', Number)
    .option('--flush-after-ms <n>', 'seal the last window once its newest note is this old (default 1200000)', integer)
    .option('--concurrency <n>', 'LLM calls at once (default 3)', integer)
    .option('--batch-delay-ms <n>', 'pause between batches of calls (default 1500)', integer)
    .option('--dry-run', 'say what would be done; no LLM call, no write')
    .action(action(summariesUpdate, 'fields'));
  summaries
    .command('list <space_id>')
    .description('summaries, newest first per level')
    .option('--level <n>', 'only this level', integer)
    .action(action(summariesList, 'summaries'));
  summaries.command('show <space_id> <summary_id>').description('one summary and what it covers').action(action(summariesShow, 'summary'));
  summaries.command('status <space_id> [job_id]').description('background summaries runs, newest first').action(action(summariesStatus, 'fields'));

  program
    .command('export <space_id>')
    .description('write a space to a .tar.gz archive (with a manifest of checksums)')
    .option('-o, --output <file>', 'the archive to write; "-" for standard output (default: <space_id>.tar.gz)')
    .option('-f, --force', 'replace the output file if it exists')
    .action(action(exportSpace, 'fields'));
  program
    .command('import <file>')
    .description('create a space from an archive made by export or backup download (verified before anything is written)')
    .option('--as <space_id>', 'import under another space id')
    .action(action(importSpace, 'fields'));

  const backup = program.command('backup').description('snapshots of a space kept in the store');
  backup
    .command('create <space_id>')
    .description('take a consistent snapshot')
    .option('-d, --description <text>', 'why this backup')
    .action(action(backupCreate, 'fields'));
  backup.command('list [space_id]').description('backups, newest first').action(action(backupList, 'backups'));
  backup
    .command('restore <backup_id>')
    .description('recreate a deleted space from a backup, or copy it into a new space with --as')
    .option('--as <space_id>', 'restore into this new space id (the space must not exist)')
    .option('-y, --yes', 'confirm')
    .action(action(backupRestore, 'fields'));
  backup
    .command('download <backup_id>')
    .description('write a backup to a .tar.gz archive')
    .option('-o, --output <file>', 'the archive to write; "-" for standard output')
    .option('-f, --force', 'replace the output file if it exists')
    .action(action(backupDownload, 'fields'));
  backup.command('delete <backup_id>').description('delete a backup for good').option('-y, --yes', 'confirm').action(action(backupDelete, 'fields'));

  const token = program.command('token').description('access tokens (admin): who may read, write or administer which spaces');
  token
    .command('create <name>')
    .description('create a token (shown once); its name is the agent name on the notes written with it')
    .requiredOption('-p, --permissions <list>', 'read, write and/or admin, comma-separated')
    .requiredOption('-s, --spaces <list>', "'*' for every space, or space ids, comma-separated")
    .option('--expires-in-days <n>', 'expire after n days (default: never)', integer)
    .action(action(tokenCreate, 'fields'));
  token.command('list').description('the tokens you manage (all, or those within your spaces), never the token itself').action(action(tokenList, 'tokens'));
  token.command('revoke <name_or_hash>').description('refuse a token from now on').action(action(tokenRevoke, 'fields'));
  token
    .command('update <name_or_hash>')
    .description("change a token's permissions or spaces")
    .option('-p, --permissions <list>', 'new permissions')
    .option('-s, --spaces <list>', "replacement spaces ('*' = every space)")
    .option('--add-spaces <list>', 'spaces to add')
    .option('--remove-spaces <list>', 'spaces to remove')
    .action(action(tokenUpdate, 'fields'));
  token.command('delete <name_or_hash>').description('remove a token for good').action(action(tokenDelete, 'fields'));

  const setupCommand = program
    .command('setup <client>')
    .description(`connect an MCP client: write live-mem into its configuration (${CLIENTS.join(', ')}), keeping its other servers`)
    .option('--print', 'only show the entry (and the rules block, the hook) and the file it belongs in; write nothing')
    .option('--rules', "also write the memory workflow into the project's rules file (CLAUDE.md, .cursor/rules/live-mem.mdc, .clinerules)")
    .option('--hooks', "claude-code: also a SessionStart hook that loads the project's memory (`live-mem context`) into each new session")
    .option('--space <space_id>', 'pin the space calls without a space_id use (LIVE_MEM_SPACE; default: the project the client works in)')
    .option('--url <url>', 'a live-mem server over HTTP (serve --http) instead of a process on the local store; the token from --token-file')
    .option('--token-env <name>', 'with --url: the entry names this environment variable instead of holding the token (claude-code, cursor)')
    .option('--npx', 'launch with `npx -y live-mem` (the published package) instead of this installation (node + its bin/live-mem.cjs)')
    .addOption(
      new Option('--scope <scope>', 'claude-code, cursor: the user configuration, or the project one (.mcp.json, .cursor/mcp.json)').choices([
        'user',
        'project',
      ]),
    )
    .option('--project <dir>', 'the project folder for --scope project and --rules (default: the working folder)')
    .option('--file <file>', "write this configuration file instead of the client's usual one (VS Code Insiders, VSCodium…)")
    .option('--name <name>', 'the server name in the configuration (default live-mem)')
    .addHelpText(
      'after',
      [
        '',
        'The global --tools (default here: agent, the 12 tools an agent works with), --token-file (the token the entry uses),',
        '--agent, --home, --config and --storage go into the entry.',
        '',
        'Examples:',
        '  live-mem setup claude-desktop',
        '  live-mem --agent reviewer setup cursor --scope project --rules --space webapp',
        '  live-mem setup claude-code --hooks',
        '  live-mem setup cline --url https://memory.example.com/mcp --token-file ~/.live-mem-token',
        '  live-mem setup model --base-url https://api.openai.com/v1 --model gpt-4.1-mini --api-key-env OPENAI_API_KEY',
      ].join('\n'),
    )
    .action(storeless((globals, client: string, options: SetupOptions) => setup(client, options, globals), 'setup'));
  setupCommand
    .command('model')
    .description('write the model consolidation uses into the settings file every client reads (live-mem.yaml), once for all of them')
    .requiredOption('--base-url <url>', 'OpenAI-compatible endpoint, including /v1')
    .requiredOption('--model <name>', 'model name')
    .option('--api-key-env <name>', 'the environment variable each process reads the key from (written as a reference, not the key)')
    .option('--api-key-file <file>', 'a file holding the key: the key itself is written into the settings file (mode 0600)')
    .option('--context-window <n>', "the model's context window in tokens")
    .option('--print', 'only show the settings file it would write; write nothing')
    // `setup` takes the --print written after `model` (commander reads a parent's options anywhere): the globals have it.
    .action(
      storeless((globals, options: ModelOptions) => setupModel({ ...options, print: (globals as { print?: boolean }).print === true }, globals), 'setup'),
    );

  program
    .command('connect <url>')
    .description('serve MCP on stdio by relaying it to a live-mem server over HTTP, for clients that only launch processes (setup claude-desktop --url)')
    .action(async (url: string, _options: unknown, command: Command) => connect(url, command.optsWithGlobals<GlobalOptions>()));

  program.command('health').description('is the store reachable, is the model reachable').action(action(health, 'fields'));
  program.command('about').description('version, tools, transports, storage').action(action(about, 'fields'));
  program
    .command('doctor [space_id]')
    .description('check the store (reachable, conditional writes, leftovers, pending commits, index, endpoints) and say what to do')
    .option('--fix', 'repair what is safe to repair (admin)')
    .action(action(doctor, 'doctor'));
  program.command('whoami').description('the agent, permissions and spaces of this caller').action(action(whoami, 'fields'));
  program
    .command('version')
    .description('print the version (as --version)')
    .action(() => {
      process.stdout.write(`${VERSION}\n`);
    });

  const bank = program.command('bank').description('read the memory bank, and correct it by hand (admin)');
  bank.command('list <space_id>').description('list bank files').action(action(bankList, 'bankList'));
  bank.command('read <space_id> <filename>').description('print one bank file').action(action(bankRead, 'content'));
  bank.command('read-all <space_id>').description('print every bank file').action(action(bankReadAll, 'bankAll'));
  bank
    .command('explain <space_id> <filename> [section]')
    .description('why the bank says this: the notes a file (or one section, "Top > Sub") was consolidated from, newest first')
    .option('-n, --limit <n>', 'most notes to show (1-100)', integer, 20)
    .action(action(bankExplain, 'explain'));
  bank
    .command('edit <space_id> <filename>')
    .description('correct a bank file in $VISUAL/$EDITOR; written back only if nobody changed it meanwhile (admin; a revision in history)')
    .option('--reason <text>', 'why, kept in history')
    .option('--secret', 'what this removes was a secret: history keeps the earlier text without the removed lines')
    .action(action(bankEdit, 'fields'));
  bank
    .command('write <space_id> <filename> [file]')
    .description('write a bank file whole (from a file, or standard input), as a revision in history (admin)')
    .option('--if-match <version>', 'the version the file had when you read it (`live-mem bank read ID FILE --json`); required for an existing file')
    .option('--reason <text>', 'why, kept in history')
    .option('--secret', 'what this removes was a secret: history keeps the earlier text without the removed lines')
    .addHelpText('after', '\nExample:\n  live-mem bank write my-project decisions.md fixed.md --if-match 3f2a9c0d1e2b4a5f --reason "Postgres was never chosen"')
    .action(action(bankWrite, 'fields'));
  bank
    .command('delete <space_id> <filename>')
    .description('delete a bank file, as a revision in history (admin; `bank revert` brings it back)')
    .option('-y, --yes', 'confirm the deletion')
    .option('--if-match <version>', 'only if the file is still at this version')
    .option('--reason <text>', 'why, kept in history')
    .option('--secret', 'what this removes was a secret: history keeps the earlier text without the removed lines')
    .action(action(bankDelete, 'fields'));
  bank
    .command('revert <space_id> <revision_id>')
    .description('undo a revision (bank write/edit/delete, space update-rules) while its files are unchanged since (admin)')
    .option('-y, --yes', 'confirm')
    .option('--reason <text>', 'why, kept in history')
    .action(action(bankRevert, 'fields'));

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
    const example = EXAMPLES[path.join(' ')];
    command.addHelpText(
      'after',
      `${example ? `\nExample:\n${example.map((line) => `  $ ${line}`).join('\n')}\n` : ''}\nGlobal options (--json, --home, --token, --agent, -q…): see \`live-mem --help\`.\n`,
    );
  }
  return program;
}

/** An example for the commands people start with, shown at the end of their --help. */
const EXAMPLES: Record<string, string[]> = {
  'space create': ['live-mem space create my-project -d "The web shop"'],
  note: ['live-mem note my-project "the build needs Node 20" -c decision -t build', 'git log -1 --format=%B | live-mem note my-project -'],
  read: ['live-mem read my-project -n 10 --from claude'],
  search: ['live-mem search my-project "node 20"'],
  ingest: [
    'live-mem ingest my-project history.jsonl --dry-run',
    'live-mem ingest my-project ~/.local/share/memory.jsonl --from mcp-memory',
    'live-mem ingest my-project ./notes --from markdown',
  ],
  recall: ['live-mem recall my-project why did we pick postgres'],
  context: ['live-mem context my-project "payment retries" --max-tokens 2000'],
  consolidate: ['live-mem consolidate my-project', 'live-mem consolidate my-project --only-agent claude'],
  'summaries update': ['live-mem summaries update my-project --dry-run'],
  export: ['live-mem export my-project -o my-project.tar.gz'],
  import: ['live-mem import my-project.tar.gz --as my-project-copy'],
  'backup create': ['live-mem backup create my-project -d "before the migration"'],
  'backup restore': [
    'live-mem backup restore my-project/2026-01-31T09-00-00-ab12cd --yes',
    'live-mem backup restore my-project/2026-01-31T09-00-00-ab12cd --as my-project-before --yes',
  ],
  'token create': ['live-mem token create ci-bot -p read,write -s my-project --expires-in-days 90'],
  serve: ['live-mem serve --http --port 8080'],
};
