/**
 * What recall needs of a stored summary (`{space}/_summaries/L{k}/{id}.json`, written by
 * summaries/): its level, range and text. Read leniently: a summary that does not parse is left
 * out of search, never an error for the caller.
 */
export interface SummaryDoc {
  id: string;
  level: number;
  sealed: boolean;
  covers: string[];
  range_start: string;
  range_end: string;
  summary: string;
  key_findings: string[];
  topics: string[];
  agents: string[];
  files_mentioned: string[];
}

/** Levels a summary may have (L1 over notes, L2… over the level below). */
export const SUMMARY_LEVELS = [1, 2, 3, 4, 5, 6] as const;

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

export function parseSummary(body: Buffer): SummaryDoc | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!raw || typeof raw !== 'object' || typeof raw.id !== 'string' || typeof raw.summary !== 'string' || !Number.isInteger(raw.level)) return null;
  return {
    id: raw.id,
    level: raw.level as number,
    sealed: raw.sealed === true,
    covers: strings(raw.covers),
    range_start: String(raw.range_start ?? ''),
    range_end: String(raw.range_end ?? ''),
    summary: raw.summary,
    key_findings: strings(raw.key_findings),
    topics: strings(raw.topics),
    agents: strings(raw.agents),
    files_mentioned: strings(raw.files_mentioned),
  };
}

/** The indexed text of a summary: its text, findings, topics and files. */
export const summaryText = (doc: SummaryDoc): string =>
  [doc.summary, doc.key_findings.join('\n'), doc.topics.join(' '), doc.files_mentioned.join(' ')].filter(Boolean).join('\n');
