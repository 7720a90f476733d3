import { invalid } from '../../shared/errors.js';
import type { Anchor } from './anchor.js';
import { isRepositoryPath } from './cite.js';

/**
 * Anchors as a note stores them: in its front-matter (`anchors:`, one JSON line), beside its text, so
 * that they go wherever the note goes — into history with the consolidation that moves it, into backups
 * and exports, out with a forget. Read back from a store they are untrusted: what is not an anchor is
 * dropped, never an error.
 */

/** Anchors one note may carry. */
export const MAX_ANCHORS = 20;

const HASH = /^sha256:[0-9a-f]{64}$/;

/** `value` as an anchor, or undefined when it is none. */
function anchorOf(value: unknown): Anchor | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const a = value as Record<string, unknown>;
  if (typeof a.path !== 'string' || !isRepositoryPath(a.path) || typeof a.hash !== 'string' || !HASH.test(a.hash)) return undefined;
  if (typeof a.span !== 'number' || !Number.isInteger(a.span) || a.span < 0) return undefined;
  const lines =
    Array.isArray(a.lines) && a.lines.length === 2 && a.lines.every((n) => Number.isInteger(n) && (n as number) >= 1)
      ? (a.lines as [number, number])
      : undefined;
  const text = (field: unknown, pattern: RegExp) => (typeof field === 'string' && pattern.test(field) ? field : undefined);
  const symbol = text(a.symbol, /^[A-Za-z_$][\w$.]{0,80}$/);
  const commit = text(a.commit, /^[0-9a-f]{7,64}$/);
  const repo = text(a.repo, /^[^\s]{1,300}$/);
  const hashes =
    Array.isArray(a.line_hashes) && a.line_hashes.every((h) => typeof h === 'string' && /^[\w-]{8}$/.test(h)) ? (a.line_hashes as string[]) : undefined;
  return {
    path: a.path,
    ...(lines ? { lines } : {}),
    ...(symbol ? { symbol } : {}),
    ...(commit ? { commit } : {}),
    ...(repo ? { repo } : {}),
    hash: a.hash,
    span: a.span,
    ...(hashes ? { line_hashes: hashes } : {}),
  };
}

/** The anchors of a stored note's front-matter (at most MAX_ANCHORS; what is not one is left out). */
export function storedAnchors(value: unknown): Anchor[] {
  if (!Array.isArray(value)) return [];
  return value.slice(0, MAX_ANCHORS).flatMap((entry) => anchorOf(entry) ?? []);
}

/** Anchors a writer gives (live_note's, already captured): refused whole, with why, when one is not an anchor or there are too many. */
export function givenAnchors(value: readonly unknown[] | undefined): Anchor[] {
  if (!value || value.length === 0) return [];
  if (value.length > MAX_ANCHORS) throw invalid(`at most ${MAX_ANCHORS} anchors a note, got ${value.length}`);
  return value.map((entry, i) => {
    const anchor = anchorOf(entry);
    if (!anchor) throw invalid(`anchor ${i + 1} is not one: it needs a path inside the repository, a sha256 hash and a span`);
    return anchor;
  });
}
