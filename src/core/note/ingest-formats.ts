import { isoSeconds } from '../../shared/time.js';
import type { IngestEntry, IngestItem } from './ingest-entry.js';
import { splitFrontMatter } from './note-file.js';

/**
 * The formats `live-mem ingest` reads, as entries for the core's ingest (ingest.ts): parsing only,
 * from text the shell reads (lines of a file or of standard input, a folder's files). What a line
 * cannot be read as is yielded as a problem at its line, so that one refusal names every bad line.
 */

const MAX_SHOWN = 60;
const shown = (text: string): string => JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Each non-blank line with its number (from 1); a byte-order mark at the start is not content. */
async function* numbered(lines: AsyncIterable<string> | Iterable<string>): AsyncGenerator<{ line: number; text: string }> {
  let line = 0;
  for await (const raw of lines) {
    line++;
    const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (text.trim() !== '') yield { line, text };
  }
}

function parseLine(text: string): { value: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `not JSON (${(error as Error).message})` };
  }
  return isRecord(value) ? { value } : { problem: `not a JSON object: ${shown(text.trim())}` };
}

/**
 * JSON Lines, one note per line: `{"timestamp": "2024-03-01T10:00:00Z", "agent": "alice",
 * "category": "decision", "content": "…", "tags": ["a", "b"] | "a,b"}`; only `timestamp` and
 * `content` are required.
 */
export async function* jsonlEntries(lines: AsyncIterable<string> | Iterable<string>): AsyncGenerator<IngestItem> {
  for await (const { line, text } of numbered(lines)) {
    const at = `line ${line}`;
    const parsed = parseLine(text);
    if ('problem' in parsed) {
      yield { at, problem: parsed.problem };
      continue;
    }
    const { timestamp, agent, category, content, tags } = parsed.value;
    yield { at, timestamp, agent, category, content, tags };
  }
}

interface McpEntity {
  line: number;
  name: string;
  entityType: string;
  observations: string[];
  relations: string[];
}

/**
 * The official MCP memory server's `memory.jsonl`: `{"type":"entity","name","entityType","observations":[…]}`
 * and `{"type":"relation","from","to","relationType"}` lines. Each entity becomes one note: its
 * name and type, its observations, then the relations it takes part in, tagged with its type and
 * name. The format keeps no dates: every entity gets `timestamp` (the file's time, or one given).
 * Relations may come before or after their entities, so the whole file is read first.
 */
export async function* mcpMemoryEntries(lines: AsyncIterable<string> | Iterable<string>, timestamp: Date): AsyncGenerator<IngestItem> {
  const entities = new Map<string, McpEntity>();
  const relations: Array<{ from: string; to: string; type: string }> = [];
  const problems: IngestItem[] = [];
  for await (const { line, text } of numbered(lines)) {
    const at = `line ${line}`;
    const parsed = parseLine(text);
    if ('problem' in parsed) {
      problems.push({ at, problem: parsed.problem });
      continue;
    }
    const record = parsed.value;
    const strings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');
    if (record.type === 'entity') {
      const { name, entityType, observations = [] } = record;
      if (typeof name !== 'string' || name.trim() === '') problems.push({ at, problem: 'an entity needs a "name" (a string)' });
      else if (typeof entityType !== 'string') problems.push({ at, problem: `entity ${shown(name)} needs an "entityType" (a string)` });
      else if (!strings(observations)) problems.push({ at, problem: `entity ${shown(name)}: "observations" must be a list of strings` });
      else {
        // The server keeps one line per entity; a repeated name adds its observations to the first.
        const known = entities.get(name);
        if (known) known.observations.push(...(observations as string[]).filter((o) => !known.observations.includes(o)));
        else entities.set(name, { line, name, entityType, observations: [...(observations as string[])], relations: [] });
      }
    } else if (record.type === 'relation') {
      const { from, to, relationType } = record;
      if (typeof from !== 'string' || typeof to !== 'string' || typeof relationType !== 'string') {
        problems.push({ at, problem: 'a relation needs "from", "to" and "relationType" (strings)' });
      } else relations.push({ from, to, type: relationType });
    } else problems.push({ at, problem: `unknown "type" ${shown(String(record.type))}: memory.jsonl holds "entity" and "relation" lines` });
  }
  for (const relation of relations) {
    const sentence = `${relation.from} ${relation.type} ${relation.to}`;
    for (const end of new Set([relation.from, relation.to])) entities.get(end)?.relations.push(sentence);
  }
  yield* problems;
  const time = timestamp.toISOString();
  for (const entity of entities.values()) {
    const content = [
      `${entity.name} (${entity.entityType})`,
      ...entity.observations.map((observation) => `- ${observation}`),
      ...(entity.relations.length > 0 ? ['', 'Relations:', ...entity.relations.map((relation) => `- ${relation}`)] : []),
    ].join('\n');
    // A tag is at most 64 characters (note-file.ts): a longer name is cut, still whole in the content.
    const tags = [entity.entityType, entity.name].map((tag) => tag.trim().slice(0, 64)).filter(Boolean);
    yield { at: `line ${entity.line}`, timestamp: time, category: 'observation', content, tags };
  }
}

/**
 * One Markdown note with YAML front-matter: `date` or `timestamp`, `agent` or `author`,
 * `category`, `tags`, and a `title` put first as a heading when the text has none; the time falls
 * back to `modified` (the file's modification time) when the front-matter names none.
 */
export function markdownEntry(text: string, at: string, modified: Date): IngestEntry {
  const { header, content } = splitFrontMatter(text);
  const field = (...keys: string[]) => keys.map((key) => header?.[key]).find((value) => value !== undefined && value !== null);
  const time = field('timestamp', 'date');
  const title = field('title');
  const body = content.trim();
  const withTitle = typeof title === 'string' && title.trim() !== '' && !body.startsWith('#') ? `# ${title.trim()}\n\n${body}` : body;
  return {
    at,
    timestamp: time instanceof Date ? isoSeconds(time) : time === undefined ? modified.toISOString() : typeof time === 'string' ? time : String(time),
    agent: field('agent', 'author'),
    category: field('category'),
    content: withTitle,
    tags: field('tags'),
  };
}
