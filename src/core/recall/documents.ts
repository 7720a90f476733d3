import type { BankSection } from '../markdown/sections.js';
import { parseNoteName, stampToIso } from '../note-name.js';
import type { SummaryRecord } from '../derived/summary-record.js';

/**
 * What recall indexes, as documents with ids that carry their own description, so a snapshot of
 * the index needs no table beside the engine's ids:
 *
 *   n:{filename}            a live note (level 0)
 *   h:{cid}/{filename}      a note consolidated by `cid` (level 0)
 *   b:{file}#{i}            section i of a bank file (its heading path is kept beside)
 *   p:{cid}/{i}             section i of compaction cid's pre-images: an earlier version of a bank section
 *   s:synthesis             the cumulative synthesis
 *   m:{summary id}          a summary of level ≥ 1 (its range is kept beside)
 */
export type RecallSource = 'live' | 'history' | 'bank' | 'bank_history' | 'synthesis' | 'summary';

export interface DocMeta {
  id: string;
  source: RecallSource;
  /** 0 for notes, k for summaries of level k, null for the bank and the synthesis. */
  level: number | null;
  /**
   * How to read it whole: a note's filename, "file.md#A > B" for a bank section (and for an earlier
   * version of one: `history_read` of its compaction_id), a summary id, "_synthesis.md".
   */
  ref: string;
  consolidation_id?: string;
  /** Pre-images: the bank file and heading path the section had, the compaction that rewrote it, and when. */
  filename?: string;
  path?: string[];
  compaction_id?: string;
  superseded_at?: string;
  /** Pre-images: says in words that this is not the bank's current text. */
  note?: string;
  /** Notes: when written (ISO, second precision). */
  timestamp?: string;
  /** Summaries: what they cover, in time. */
  range_start?: string;
  range_end?: string;
  agent?: string;
  category?: string;
}

export const noteDocId = (filename: string, consolidationId?: string): string => (consolidationId ? `h:${consolidationId}/${filename}` : `n:${filename}`);
/**
 * Text derived from notes — bank sections, summaries, the synthesis, earlier bank text — as the
 * search engine's background (IndexOptions.background): searched, but not counted in the statistics
 * that weigh words, so a consolidation that adds it leaves the notes ranked among themselves as they were.
 */
export const isDerivedDocId = (id: string): boolean => !id.startsWith('n:') && !id.startsWith('h:');
export const INDEX_OPTIONS = { background: isDerivedDocId } as const;
export const preimageDocId = (compactionId: string, i: number): string => `p:${compactionId}/${i}`;
/** The compaction and section index of a pre-image's id; null for any other id. */
export function parsePreimageDocId(id: string): { compactionId: string; i: number } | null {
  const slash = id.indexOf('/');
  if (!id.startsWith('p:') || slash < 0) return null;
  const i = Number(id.slice(slash + 1));
  return Number.isInteger(i) && i >= 0 ? { compactionId: id.slice(2, slash), i } : null;
}
export const summaryDocId = (summaryId: string): string => `m:${summaryId}`;
export const SYNTHESIS_DOC_ID = 's:synthesis';

/** The description of a note's document, from its id alone; null for any other id. */
export function noteMeta(id: string): DocMeta | null {
  let filename: string;
  let consolidationId: string | undefined;
  if (id.startsWith('n:')) filename = id.slice(2);
  else if (id.startsWith('h:')) {
    const slash = id.indexOf('/');
    consolidationId = id.slice(2, slash);
    filename = id.slice(slash + 1);
  } else return null;
  const name = parseNoteName(filename);
  if (!name) return null;
  return {
    id,
    source: consolidationId ? 'history' : 'live',
    level: 0,
    ref: filename,
    ...(consolidationId ? { consolidation_id: consolidationId } : {}),
    timestamp: stampToIso(name.stamp),
    agent: name.agent,
    category: name.category,
  };
}

export const bankRef = (section: Pick<BankSection, 'file' | 'path'>): string =>
  section.path.length > 0 ? `${section.file}#${section.path.join(' > ')}` : section.file;

/** What the index keeps of a pre-image section beside the engine (its text stays in preimages.json). */
export interface PreimageCoverage {
  filename: string;
  path: string[];
}

/** The description of pre-image `i` of a compaction committed at `committedAt`. */
export function preimageMeta(compactionId: string, i: number, committedAt: string, section: PreimageCoverage): DocMeta {
  return {
    id: preimageDocId(compactionId, i),
    source: 'bank_history',
    level: null,
    ref: bankRef({ file: section.filename, path: section.path }),
    filename: section.filename,
    path: section.path,
    compaction_id: compactionId,
    superseded_at: committedAt,
    note: `an earlier version of this bank section, replaced by compaction ${compactionId} on ${committedAt}; not the bank's current text`,
  };
}

/** A pre-image's indexed text: its heading path (as bank sections are indexed) and its text. */
export const preimageText = (section: PreimageCoverage & { content: string }): string => `${section.path.join(' ')}
${section.content}`;

/** The indexed text of a summary: its text, findings, topics and files. */
export const summaryText = (record: Pick<SummaryRecord, 'summary' | 'key_findings' | 'topics' | 'files_mentioned'>): string =>
  [record.summary, record.key_findings.join('\n'), record.topics.join(' '), record.files_mentioned.join(' ')].filter(Boolean).join('\n');
