import { parse as parseYaml } from 'yaml';
import { invalid } from '../../shared/errors.js';
import type { Anchor } from '../anchors/anchor.js';
import { storedAnchors } from '../anchors/stored.js';
import { isoSeconds } from '../note-name.js';

/**
 * A note file: YAML front-matter, a blank line, then the content, byte for byte the Python
 * server's format:
 *
 *   ---
 *   timestamp: "2026-02-20T18:05:12Z"
 *   agent: "cline-dev"
 *   category: "observation"
 *   tags: ["auth", "module"]
 *   space_id: "projet-alpha"
 *   anchors: [{"path":"src/net/client.ts","lines":[40,72],…}]    (live-mem: the code it cites, core/anchors/)
 *   ---
 *
 *   content
 */
/**
 * The largest note file any live-mem writes, whatever its settings: the highest LIVE_MEM_MAX_NOTE_CHARS
 * (config/fields.ts: 10 million characters) at 4 bytes each, and room for its front-matter. A bigger
 * file in live/ is no note of live-mem's, and is not read (corpus.ts).
 */
export const LARGEST_NOTE_BYTES = 10_000_000 * 4 + 64 * 1024;

export interface NoteFields {
  timestamp: string;
  agent: string;
  category: string;
  tags: string[];
  space_id: string;
  /** The code the note cites, as its writer's checkout had it (core/anchors/); absent when none. */
  anchors?: Anchor[];
}

export interface ParsedNote extends Partial<NoteFields> {
  content: string;
}

export function formatNoteFile(fields: NoteFields, content: string): string {
  // JSON strings are valid YAML double-quoted scalars, so this is both exact and cheap.
  const q = (value: string) => JSON.stringify(value);
  return [
    '---',
    `timestamp: ${q(fields.timestamp)}`,
    `agent: ${q(fields.agent)}`,
    `category: ${q(fields.category)}`,
    `tags: [${fields.tags.map(q).join(', ')}]`,
    `space_id: ${q(fields.space_id)}`,
    ...(fields.anchors && fields.anchors.length > 0 ? [`anchors: ${JSON.stringify(fields.anchors)}`] : []),
    '---',
    '',
    content,
  ].join('\n');
}

/** Reads a note file; a file without front-matter is all content (never an error). */
export function parseNoteFile(text: string): ParsedNote {
  const { header, content } = splitFrontMatter(text);
  if (!header) return { content };
  const str = (value: unknown) => (value === undefined || value === null ? undefined : String(value));
  const tags = Array.isArray(header.tags) ? header.tags.map(String) : typeof header.tags === 'string' ? splitTags(header.tags) : undefined;
  const timestamp = header.timestamp instanceof Date ? isoSeconds(header.timestamp) : str(header.timestamp);
  const fields = { timestamp, agent: str(header.agent), category: str(header.category), tags, space_id: str(header.space_id) };
  const result: ParsedNote = { content };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) Object.assign(result, { [key]: value });
  const anchors = storedAnchors(header.anchors);
  if (anchors.length > 0) result.anchors = anchors;
  return result;
}

/**
 * A Markdown file's YAML front-matter, as parsed (any keys), and the content after it; `header` is
 * null, and the content the whole text, when there is no front-matter or it is not a YAML mapping.
 */
export function splitFrontMatter(text: string): { header: Record<string, unknown> | null; content: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { header: null, content: text };
  const header = parseOwnHeader(match[1] ?? '') ?? parseYamlHeader(match[1] ?? '');
  if (!header) return { header: null, content: text };
  return { header, content: text.slice(match[0].length).replace(/^\r?\n/, '') };
}

/**
 * The header as `formatNoteFile` (and the Python server) writes it: `key: <JSON value>` per line.
 * Ten times faster than a YAML parse; anything else returns null and goes to the YAML parser.
 */
function parseOwnHeader(header: string): Record<string, unknown> | null {
  const fields: Record<string, unknown> = {};
  for (const line of header.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon <= 0) return null;
    try {
      fields[line.slice(0, colon)] = JSON.parse(line.slice(colon + 2));
    } catch {
      return null;
    }
  }
  return fields;
}

function parseYamlHeader(header: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = parseYaml(header);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** "auth, module,,x" → ["auth", "module", "x"] */
export function splitTags(tags: string): string[] {
  return tags
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag.length > 0);
}

const MAX_TAGS = 32;
const MAX_TAG_CHARS = 64;

/** Tags as a note stores them: trimmed, without empties or repeats; too many or too long is refused. */
export function normalizeTags(tags: string | string[] | undefined): string[] {
  const list = tags === undefined ? [] : Array.isArray(tags) ? tags.map((tag) => String(tag).trim()).filter(Boolean) : splitTags(tags);
  if (list.length > MAX_TAGS) throw invalid(`at most ${MAX_TAGS} tags, got ${list.length}`);
  const long = list.find((tag) => tag.length > MAX_TAG_CHARS);
  if (long !== undefined) throw invalid(`tag ${JSON.stringify(long.slice(0, 20))}… is longer than ${MAX_TAG_CHARS} characters`);
  return [...new Set(list)];
}
