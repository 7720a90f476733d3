import { createHash } from 'node:crypto';
import { invalid } from '../../shared/errors.js';
import { toAgentName } from '../caller.js';
import type { KindCount, RedactMode } from '../redact/redact.js';
import { redactFields } from '../redact/stored-text.js';
import { validateCategory, type Category } from '../validate.js';
import { formatNoteName } from '../note-name.js';
import { normalizeTags } from './note-file.js';

/**
 * One note to ingest, as a format's parser read it (ingest-formats.ts): the fields unchecked, and
 * where it came from (`line 12`, `notes/a.md`) so that a refusal points at it.
 */
export interface IngestEntry {
  at: string;
  timestamp: unknown;
  agent?: unknown;
  category?: unknown;
  content: unknown;
  tags?: unknown;
}

/** What a parser could not read at all (not JSON, not an object): refused with the entries' problems. */
export interface IngestProblem {
  at: string;
  problem: string;
}

export type IngestItem = IngestEntry | IngestProblem;

export const isProblem = (item: IngestItem): item is IngestProblem => 'problem' in item;

/** An entry checked and ready to write: its note name is a function of the entry alone. */
export interface PreparedNote {
  filename: string;
  time: Date;
  agent: string;
  category: Category;
  tags: string[];
  /** As it will be stored: `<private>` spans removed, secrets masked per LIVE_MEM_REDACT. */
  content: string;
  redacted: KindCount[];
  private_removed: number;
}

/**
 * ISO 8601: a date, or a date-time with or without seconds, fraction and offset. One with a clock
 * but no offset (`2024-03-01T10:00:00`) is read as UTC, so a file names the same notes on every machine.
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
/** A timestamp this far after the clock is a mistake (a wrong year, a unit slip), not history: a note from the future would stay "newest". */
const FUTURE_SLACK_MS = 10 * 60 * 1000;
const MAX_AGENT_CHARS = 64;

/** An ISO 8601 date or date-time (UTC when it names no offset); throws `invalid` with the reason. */
export function parseTimestamp(value: unknown, now: Date): Date {
  if (value === undefined || value === null || value === '') throw invalid('timestamp is missing (an ISO 8601 date-time such as 2024-03-01T10:00:00Z)');
  if (typeof value !== 'string') throw invalid(`timestamp must be an ISO 8601 string, got ${JSON.stringify(value)}`);
  const text = value.trim();
  const iso = ISO_8601.exec(text);
  const zoneless = iso !== null && iso[4] === undefined && text.length > 10;
  const ms = iso ? Date.parse(zoneless ? `${text.replace(' ', 'T')}Z` : text) : Number.NaN;
  if (!iso || Number.isNaN(ms)) throw invalid(`timestamp ${JSON.stringify(value.slice(0, 40))} is not an ISO 8601 date-time (such as 2024-03-01T10:00:00Z)`);
  // Date.parse rolls 2024-02-30 over to March 1st: a day the calendar does not have is refused.
  const [year, month, day] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) throw invalid(`timestamp ${JSON.stringify(value.slice(0, 40))} names no such day`);
  if (ms > now.getTime() + FUTURE_SLACK_MS) throw invalid(`timestamp ${JSON.stringify(value.slice(0, 40))} is in the future`);
  return new Date(ms);
}

function checkAgent(value: unknown, fallback: string): string {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value !== 'string') throw invalid(`agent must be a string, got ${JSON.stringify(value)}`);
  const name = value.trim();
  if (name.length > MAX_AGENT_CHARS) throw invalid(`agent has ${name.length} characters; at most ${MAX_AGENT_CHARS}`);
  // toAgentName reduces anything to a safe name, falling back to "agent": a name with no letter or digit would all become that one.
  if (!/[\p{L}\p{N}]/u.test(name)) throw invalid(`agent ${JSON.stringify(name)} has no letter or digit`);
  return toAgentName(name);
}

function checkTags(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return normalizeTags(value);
  if (Array.isArray(value) && value.every((tag) => typeof tag === 'string' || typeof tag === 'number')) return normalizeTags(value.map(String));
  throw invalid('tags must be a list of strings or a comma-separated string');
}

/**
 * Six base-36 characters of a hash of what makes the note as stored: the same entry gets the same
 * name on every run (so a re-run finds it written), another content or time another name. Never of
 * the text before redaction: a name is listed to every reader, and six characters of an unsalted
 * hash of the raw text let a reader who guesses the note around a masked secret or a `<private>`
 * span confirm each guess offline.
 */
export function contentId(time: Date, agent: string, category: string, content: string, tags: readonly string[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([time.toISOString(), agent, category, content, tags]))
    .digest();
  return (digest.readBigUInt64BE(0) % 36n ** 6n).toString(36).padStart(6, '0');
}

export interface PrepareSettings {
  /** Who writes an entry that names no agent. */
  agent: string;
  now: Date;
  maxNoteChars: number;
  redact: RedactMode;
}

/** Checks one entry as `live_note` checks a note, and names it; throws `invalid` with the reason. */
export function prepareEntry(entry: IngestEntry, settings: PrepareSettings): PreparedNote {
  const time = parseTimestamp(entry.timestamp, settings.now);
  const category = validateCategory(entry.category === undefined || entry.category === null ? 'observation' : String(entry.category));
  if (typeof entry.content !== 'string') throw invalid(entry.content === undefined ? 'content is missing' : 'content must be a string');
  const content = entry.content;
  if (content.trim().length === 0) throw invalid('content is empty');
  if (content.length > settings.maxNoteChars) throw invalid(`content has ${content.length} characters; the limit is ${settings.maxNoteChars}`);
  // Every text the entry brings, through the pass a live_note's input takes (redact/stored-text.ts).
  const kept = redactFields({ content, agent: entry.agent, tags: entry.tags }, settings.redact, { label: (path) => `the note's ${path}` });
  const agent = checkAgent(kept.value.agent, settings.agent);
  const tags = checkTags(kept.value.tags);
  // Named from the note as stored: a name hashed from the text before masking would let a reader confirm guesses of
  // a masked secret or a <private> span (and a run with another LIVE_MEM_REDACT, storing another text, names another note).
  const filename = formatNoteName(time, agent, category, contentId(time, agent, category, kept.value.content, tags));
  return { filename, time, agent, category, tags, content: kept.value.content, redacted: kept.redacted, private_removed: kept.private_removed };
}
