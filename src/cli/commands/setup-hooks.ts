import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { invalid } from '../../shared/errors.js';
import type { Place, Scope, SetupGlobals } from './setup-options.js';

/**
 * `setup claude-code --hooks`: a SessionStart hook in Claude Code's settings that runs
 * `live-mem context <space> --hook`, whose standard output Claude Code adds to the new session's
 * context: the memory is loaded before the model says a word, instead of relying on it to ask.
 * The hook fires when a session starts, after /clear and after a compaction (the context was
 * emptied or shortened); a resumed session still holds what it loaded.
 */

/** Claude Code's settings file: the user's, or the project's (shared with the team, like .mcp.json). */
export function claudeSettingsFile(scope: Scope, place: Place): string {
  const p = place.platform === 'win32' ? path.win32 : path.posix;
  return scope === 'project' ? p.join(place.project, '.claude', 'settings.json') : p.join(place.home, '.claude', 'settings.json');
}

/** Seconds Claude Code lets the hook run before it stops it; a store on disk answers in well under one. */
export const HOOK_TIMEOUT_S = 10;

export const HOOK_MATCHER = 'startup|clear|compact';

export interface HookGroup {
  matcher: string;
  hooks: Array<{ type: 'command'; command: string; timeout: number }>;
}

export const hookGroup = (command: string): HookGroup => ({ matcher: HOOK_MATCHER, hooks: [{ type: 'command', command, timeout: HOOK_TIMEOUT_S }] });

/** An argument as a POSIX shell reads it (Claude Code runs hooks with sh, or Git Bash on Windows): quoted only when it must be. */
export const shellWord = (word: string): string => (/^[\w./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** A hook this command wrote: it runs live-mem's `context … --hook` (whatever node, path or space it names). */
const isOurs = (hook: unknown): boolean =>
  isObject(hook) && typeof hook.command === 'string' && /live-mem/.test(hook.command) && /\scontext\s.*\s--hook(\s|$)/.test(hook.command);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The settings file's new text with our SessionStart hook in it, as its own group after the user's
 * hooks (every other key, event and hook kept); `undefined` when it is already there as it should
 * be. An older hook of ours (another node, another space) is replaced, never doubled. Refuses a file
 * that is not a JSON object, or whose `hooks` are not shaped as Claude Code reads them.
 */
export function mergeHook(old: string | undefined, group: HookGroup, file: string): string | undefined {
  let settings: unknown = {};
  if (old !== undefined && old.trim() !== '') {
    try {
      settings = JSON.parse(old);
    } catch (error) {
      throw invalid(`${file} is not valid JSON (${(error as Error).message}): fix it or move it away, then run setup again; nothing was written`);
    }
  }
  if (!isObject(settings)) throw invalid(`${file} does not hold a JSON object: fix it or move it away, then run setup again; nothing was written`);
  const hooks = settings.hooks ?? {};
  if (!isObject(hooks)) throw invalid(`${file}: "hooks" is not an object: fix it, then run setup again; nothing was written`);
  const groups = hooks.SessionStart ?? [];
  if (!Array.isArray(groups) || !groups.every((entry) => isObject(entry) && (entry.hooks === undefined || Array.isArray(entry.hooks)))) {
    throw invalid(`${file}: "hooks.SessionStart" is not a list of {matcher, hooks: [...]}: fix it, then run setup again; nothing was written`);
  }
  const theirs = groups.flatMap((entry: Record<string, unknown>) => {
    const kept = ((entry.hooks as unknown[] | undefined) ?? []).filter((hook) => !isOurs(hook));
    if (kept.length === ((entry.hooks as unknown[] | undefined) ?? []).length) return [entry];
    return kept.length > 0 ? [{ ...entry, hooks: kept }] : [];
  });
  const next = { ...settings, hooks: { ...hooks, SessionStart: [...theirs, group] } };
  if (isDeepStrictEqual(next, settings)) return undefined;
  return `${JSON.stringify(next, null, 2)}\n`;
}

/** The hook's shell command: the entry's node and bin (or npx), the store it reads, then `context <space|.> --hook`. */
export function hookCommand(
  launch: { command: string; args: string[] },
  globals: SetupGlobals,
  tokenFile: string | undefined,
  space: string | undefined,
): string {
  const store = [
    ...(globals.home ? ['--home', path.resolve(globals.home)] : []),
    ...(globals.config ? ['--config', path.resolve(globals.config)] : []),
    ...(globals.storage ? ['--storage', globals.storage] : []),
    ...(tokenFile ? ['--token-file', tokenFile] : []),
  ];
  return [launch.command, ...launch.args, ...store, 'context', space ?? '.', '--hook'].map(shellWord).join(' ');
}
