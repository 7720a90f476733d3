import { invalid } from '../../shared/errors.js';
import type { Checkout } from '../../shared/checkout.js';
import { type Anchor, type AnchorCheck, captureAnchor, checkAnchor } from './anchor.js';
import { type Citation, citationsIn, parseCitations } from './cite.js';
import { MAX_ANCHORS } from './stored.js';

/**
 * Anchors as the tools and the CLI use them: captured for a note being written (what its text cites
 * and what the writer names), and checked for notes being read — both against a checkout the caller
 * brings (the writer's, the reader's).
 */

/**
 * The anchors of a note about to be written: each citation its text makes that the checkout holds
 * (silently skipped when it does not: prose names paths loosely), and each one the writer names in
 * `named` (`path`, `path:12-40`, `path#symbol`; refused, with why, when malformed or not in the checkout).
 */
export async function anchorsFor(checkout: Checkout | undefined, content: string, named = ''): Promise<Anchor[]> {
  const { citations: asked, refused } = parseCitations(named);
  if (refused.length > 0)
    throw invalid(`anchors: ${refused.map((r) => JSON.stringify(r)).join(', ')} name no file of the repository (path, path:12-40 or path#symbol)`);
  if (!checkout) {
    if (asked.length > 0)
      throw invalid(
        'anchors: no checkout of the project here to capture them from (a stdio server in the project, or the CLI in it): pass what `live-mem cite` prints in the project instead',
      );
    return [];
  }
  const anchors: Anchor[] = [];
  const seen = new Set<string>();
  const take = async (citation: Citation, strict: boolean) => {
    const key = `${citation.path}:${citation.lines?.join('-') ?? ''}#${citation.symbol ?? ''}`;
    if (seen.has(key) || anchors.length >= MAX_ANCHORS) return;
    seen.add(key);
    const anchor = await captureAnchor(checkout, citation);
    if ('refused' in anchor) {
      if (strict) throw invalid(`anchors: ${anchor.refused}`);
      return;
    }
    anchors.push(anchor);
  };
  for (const citation of asked) await take(citation, true);
  for (const citation of citationsIn(content)) await take(citation, false);
  return anchors;
}

/** An anchor as a reader is shown it: what it cites, and its state in the reader's checkout. */
export interface CheckedAnchor extends AnchorCheck {
  path: string;
  lines?: [number, number];
  symbol?: string;
  commit?: string;
}

/** One anchor as a reader is shown it, checked against `checkout`. */
export async function checkedAnchor(checkout: Checkout | undefined, anchor: Anchor): Promise<CheckedAnchor> {
  return {
    path: anchor.path,
    ...(anchor.lines ? { lines: anchor.lines } : {}),
    ...(anchor.symbol ? { symbol: anchor.symbol } : {}),
    ...(anchor.commit ? { commit: anchor.commit.slice(0, 12) } : {}),
    ...(await checkAnchor(checkout, anchor)),
  };
}

/** `notes` with their anchors checked against `checkout` (`anchors` replaced by what a reader needs). */
export async function withCheckedAnchors<Note extends { anchors?: Anchor[] }>(
  checkout: Checkout | undefined,
  notes: readonly Note[],
): Promise<Array<Omit<Note, 'anchors'> & { anchors?: CheckedAnchor[] }>> {
  return Promise.all(
    notes.map(async (note): Promise<Omit<Note, 'anchors'> & { anchors?: CheckedAnchor[] }> => {
      const { anchors: stored, ...rest } = note;
      if (!stored || stored.length === 0) return rest;
      return { ...rest, anchors: await Promise.all(stored.map((anchor) => checkedAnchor(checkout, anchor))) };
    }),
  );
}

/**
 * What a note's anchors say in the reader's checkout, for its label: "code fresh", or each anchor that is not
 * ("code drifted: src/a.ts:3-9 …"); `stale` when one drifted or is missing. Nothing for a note citing no code.
 */
export async function codeLabel(checkout: Checkout | undefined, anchors: readonly Anchor[] | undefined): Promise<{ text: string; stale: boolean } | undefined> {
  if (!anchors || anchors.length === 0) return undefined;
  const checks = await Promise.all(anchors.map((anchor) => checkAnchor(checkout, anchor)));
  const off = checks.flatMap((check, i) => (check.state === 'fresh' ? [] : [`${check.state} ${citedAs(anchors[i] as Anchor)}: ${check.detail}`]));
  return {
    text: off.length === 0 ? 'code fresh' : `code ${off.join('; ')}`,
    stale: checks.some((check) => check.state === 'drifted' || check.state === 'missing'),
  };
}

/** What an anchor cites, as people write it: `path:12-40`, `path#symbol`. */
export const citedAs = (anchor: Pick<Anchor, 'path' | 'lines' | 'symbol'>): string =>
  `${anchor.path}${anchor.lines ? `:${anchor.lines.join('-')}` : ''}${anchor.symbol ? `#${anchor.symbol}` : ''}`;
