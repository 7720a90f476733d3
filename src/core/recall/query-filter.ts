import { invalid } from '../../shared/errors.js';
import { toAgentName } from '../caller.js';
import { parseDateTime, validateCategory } from '../validate.js';
import type { DocMeta, RecallSource } from './documents.js';

export const RECALL_SOURCES: readonly RecallSource[] = ['live', 'history', 'bank', 'bank_history', 'synthesis', 'summary'];

/** memory_search's filters (each optional). */
export interface RecallFilterInput {
  /** 0 = notes, k ≥ 1 = summaries of level k. */
  levels?: number[];
  sources?: string[];
  category?: string;
  agent?: string;
  since?: string;
  until?: string;
}

/** What a document must be to be kept, or undefined without filters (nothing is then asked per candidate). Bad input throws. */
export function buildFilter(input: RecallFilterInput): ((meta: DocMeta) => boolean) | undefined {
  const levels = input.levels && input.levels.length > 0 ? new Set(input.levels.map((level) => validateLevel(level))) : undefined;
  const sources = input.sources && input.sources.length > 0 ? new Set(input.sources.map(validateSource)) : undefined;
  const category = input.category ? validateCategory(input.category) : undefined;
  const agents = input.agent ? new Set([input.agent, toAgentName(input.agent)]) : undefined;
  const since = parseDateTime(input.since ?? '', 'since')
    ?.toISOString()
    .slice(0, 19);
  const until = parseDateTime(input.until ?? '', 'until')
    ?.toISOString()
    .slice(0, 19);
  if (!levels && !sources && !category && !agents && !since && !until) return undefined;
  return (meta: DocMeta): boolean => {
    if (levels && (meta.level === null || !levels.has(meta.level))) return false;
    if (sources && !sources.has(meta.source)) return false;
    if (category && meta.category !== category) return false;
    if (agents && (meta.agent === undefined || !agents.has(meta.agent))) return false;
    if (since || until) {
      // Second precision, as notes carry it; a summary matches when its range overlaps; an earlier
      // version of a bank section is dated by when a compaction replaced it.
      const start = (meta.timestamp ?? meta.superseded_at ?? meta.range_start)?.slice(0, 19);
      const end = (meta.timestamp ?? meta.superseded_at ?? meta.range_end)?.slice(0, 19);
      if (!start || !end) return false;
      if (since && end < since) return false;
      if (until && start > until) return false;
    }
    return true;
  };
}

function validateLevel(level: unknown): number {
  if (!Number.isInteger(level) || (level as number) < 0 || (level as number) > 6)
    throw invalid(`levels must be integers from 0 (notes) to 6, got ${JSON.stringify(level)}`);
  return level as number;
}

function validateSource(source: unknown): RecallSource {
  if (!RECALL_SOURCES.includes(source as RecallSource)) throw invalid(`unknown source ${JSON.stringify(source)}: use ${RECALL_SOURCES.join(', ')}`);
  return source as RecallSource;
}
