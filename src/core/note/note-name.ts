import { CATEGORIES, type Category } from '../validate.js';

/**
 * Note file names carry everything a read filters on, so filters are answered from a listing
 * without reading bodies: `{YYYYMMDDTHHMMSS}_{agent}_{category}_{id8}.md`.
 *
 * id8 = two base-36 characters of the millisecond within the second, then six random ones: names
 * sort in write order to the millisecond, and notes written by several processes in the same
 * millisecond still differ (create-only writes make a collision a retry, never an overwrite).
 * Agents may contain '_' (names written by the Python server): the name is parsed from both ends.
 */
export interface NoteName {
  filename: string;
  /** Second precision, UTC. */
  time: Date;
  agent: string;
  category: string;
  id: string;
}

const NAME = /^(\d{8}T\d{6})_(.+)_([a-z]+)_([0-9a-zA-Z]+)\.md$/;

export function formatNoteName(time: Date, agent: string, category: Category, random6: string): string {
  const stamp = time.toISOString().replace(/[-:]/g, '').slice(0, 15);
  const millis = time.getUTCMilliseconds().toString(36).padStart(2, '0');
  return `${stamp}_${agent}_${category}_${millis}${random6}.md`;
}

export function parseNoteName(filename: string): NoteName | null {
  const match = NAME.exec(filename);
  if (!match) return null;
  const [, stamp, agent, category, id] = match as unknown as [string, string, string, string, string];
  const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`;
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return null;
  return { filename, time, agent, category, id };
}

export const isStandardCategory = (category: string): category is Category => (CATEGORIES as readonly string[]).includes(category);

/** ISO 8601 at second precision, as the seed writes timestamps: 2026-02-20T18:05:12Z. */
export const isoSeconds = (time: Date): string => `${time.toISOString().slice(0, 19)}Z`;
