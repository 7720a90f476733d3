import { anchorsFor } from '../../core/anchors/note-anchors.js';
import { CATEGORIES } from '../../core/validate.js';
import { type CommandDef, integer } from '../command.js';
import { invalid } from '../../shared/errors.js';
import { hereCheckout } from '../here.js';
import type { Session } from '../open.js';
import { readStdin } from '../stdin.js';

/** The note's content: the arguments joined, or standard input when they are absent or '-'. */
async function contentFrom(words: string[]): Promise<string> {
  if (words.length > 0 && !(words.length === 1 && words[0] === '-')) return words.join(' ');
  return readStdin('the note');
}

export async function note(
  { core, caller }: Session,
  spaceId: string,
  words: string[],
  options: { category: string; tags?: string; agent?: string; anchors?: string },
) {
  const content = await contentFrom(words);
  return core.notes.write(caller, {
    space_id: spaceId,
    category: options.category,
    content,
    ...(options.tags !== undefined ? { tags: options.tags } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    anchors: await anchorsFor(await hereCheckout(), content, options.anchors ?? ''),
  });
}

/** The anchors of a space's live notes and of its bank's sections, and their states in the checkout the command runs in. */
export async function anchors({ core, caller }: Session, spaceId: string, options: { limit: number }) {
  const checkout = await hereCheckout();
  const rows = await core.bankCode.spaceCode(caller, spaceId, checkout, options.limit);
  const commit = await checkout?.commit();
  return {
    status: 'ok' as const,
    space_id: spaceId,
    checkout: checkout ? `${checkout.repo ?? 'a local repository'}${commit ? ` at ${commit.slice(0, 12)}` : ''}` : 'none: this folder is in no git work tree',
    anchors: rows,
  };
}

export const read = ({ core, caller }: Session, spaceId: string, options: { limit: number; category?: string; agent?: string; since?: string }) =>
  core.notes.read(caller, {
    space_id: spaceId,
    limit: options.limit,
    ...(options.category !== undefined ? { category: options.category } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    ...(options.since !== undefined ? { since: options.since } : {}),
  });

export const search = ({ core, caller }: Session, spaceId: string, query: string, options: { limit: number }) =>
  core.notes.search(caller, { space_id: spaceId, query, limit: options.limit });

export const noteCommand: CommandDef = {
  name: 'note <space_id> [content...]',
  description: 'write a live note (content from the arguments, or standard input when absent or "-")',
  options: [
    { flags: '-c, --category <category>', description: 'note category', choices: CATEGORIES, default: 'observation' },
    { flags: '-t, --tags <tags>', description: 'comma-separated tags' },
    { flags: '--as <agent>', description: 'sign as this agent name (default: --agent / LIVE_MEM_AGENT)' },
    { flags: '--anchors <list>', description: 'code the note cites, from this checkout: path:12-40, path#symbol (what its text cites is anchored too)' },
  ],
  run: (session, spaceId: string, words: string[], options: { category: string; tags?: string; as?: string; anchors?: string }) =>
    note(session, spaceId, words, {
      category: options.category,
      ...(options.tags !== undefined ? { tags: options.tags } : {}),
      ...(options.as !== undefined ? { agent: options.as } : {}),
      ...(options.anchors !== undefined ? { anchors: options.anchors } : {}),
    }),
  view: 'written',
  examples: ['live-mem note my-project "the build needs Node 20" -c decision -t build', 'git log -1 --format=%B | live-mem note my-project -'],
};

export const readCommand: CommandDef = {
  name: 'read <space_id>',
  description: 'read the newest live notes',
  options: [
    { flags: '-n, --limit <n>', description: 'most notes to show (1-1000)', parse: integer, default: 50 },
    { flags: '-c, --category <category>', description: 'only this category' },
    { flags: '--from <agent>', description: 'only notes by this agent' },
    { flags: '--since <datetime>', description: 'only notes from this ISO 8601 date-time on' },
    { flags: '--before <filename>', description: 'only notes older than this one (the next page)' },
  ],
  run: (session, spaceId: string, options: { limit: number; category?: string; from?: string; since?: string; before?: string }) =>
    read(session, spaceId, {
      limit: options.limit,
      ...(options.category !== undefined ? { category: options.category } : {}),
      ...(options.from !== undefined ? { agent: options.from } : {}),
      ...(options.since !== undefined ? { since: options.since } : {}),
      ...(options.before !== undefined ? { before: options.before } : {}),
    }),
  view: 'notes',
  examples: ['live-mem read my-project -n 10 --from claude'],
};

export const searchCommand: CommandDef = {
  name: 'search <space_id> <query>',
  description: 'find live notes containing a text (case-insensitive)',
  options: [{ flags: '-n, --limit <n>', description: 'most notes to show (1-1000)', parse: integer, default: 20 }],
  run: search,
  view: 'notes',
  examples: ['live-mem search my-project "node 20"'],
};

/**
 * `live-mem cite`: the anchors of citations, captured from this folder's checkout and printed as the JSON
 * `live_note`'s `anchors` takes: how a note written to a server that cannot read this machine (over HTTP)
 * keeps the code it cites.
 */
async function cite(_globals: unknown, citations: string[]) {
  const checkout = await hereCheckout();
  if (!checkout) throw invalid('this folder is in no git work tree: run live-mem cite in the project whose code the note cites');
  process.stdout.write(`${JSON.stringify(await anchorsFor(checkout, '', citations.join(' ')))}\n`);
}

export const citeCommand: CommandDef = {
  name: 'cite <citation...>',
  description: "anchors for code a note cites (path, path:12-40, path#symbol), from this folder's checkout, as JSON for live_note's anchors (over HTTP)",
  direct: cite,
  examples: ["live-mem cite 'src/net/client.ts:40-72' 'src/net/client.ts#retryRequest'"],
};

export const anchorsCommand: CommandDef = {
  name: 'anchors <space_id>',
  description:
    "the code a space's bank sections and live notes cite, and whether it is still so in this folder's checkout (fresh, drifted, moved, missing, unverifiable)",
  options: [{ flags: '-n, --limit <n>', description: 'newest notes to look at (1-1000)', parse: integer, default: 1000 }],
  run: anchors,
  view: 'anchors',
  examples: ['cd ~/src/webapp && live-mem anchors acme-webapp-kgtmie3wqx'],
};
