import { parse as parseYaml } from 'yaml';

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
 *   ---
 *
 *   content
 */
export interface NoteFields {
  timestamp: string;
  agent: string;
  category: string;
  tags: string[];
  space_id: string;
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
    '---',
    '',
    content,
  ].join('\n');
}

/** Reads a note file; a file without front-matter is all content (never an error). */
export function parseNoteFile(text: string): ParsedNote {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { content: text };
  let header: Record<string, unknown> = {};
  try {
    const parsed: unknown = parseYaml(match[1] ?? '');
    if (parsed && typeof parsed === 'object') header = parsed as Record<string, unknown>;
  } catch {
    return { content: text };
  }
  const content = text.slice(match[0].length).replace(/^\r?\n/, '');
  const str = (value: unknown) => (value === undefined || value === null ? undefined : String(value));
  const tags = Array.isArray(header.tags)
    ? header.tags.map(String)
    : typeof header.tags === 'string'
      ? splitTags(header.tags)
      : undefined;
  const timestamp = header.timestamp instanceof Date ? `${header.timestamp.toISOString().slice(0, 19)}Z` : str(header.timestamp);
  const fields = { timestamp, agent: str(header.agent), category: str(header.category), tags, space_id: str(header.space_id) };
  const result: ParsedNote = { content };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) Object.assign(result, { [key]: value });
  return result;
}

/** "auth, module,,x" → ["auth", "module", "x"] */
export function splitTags(tags: string): string[] {
  return tags
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag.length > 0);
}
