/**
 * The LoCoMo data of section 21 (bench-locomo.ts) and its metrics, pure: the ten conversations of
 * bench/locomo/locomo10.json.gz (see its README: source, licence, what was changed) read with
 * node:zlib, nothing fetched; and recall@k, MRR and session Hit@1 over a ranking of turns.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const LOCOMO_FILE = fileURLToPath(new URL('../bench/locomo/locomo10.json.gz', import.meta.url));

/** The development split (report and tune on it); the other five judge the targets and are printed only on request. */
export const SPLITS = {
  dev: ['26', '30', '41', '42', '43'],
  heldout: ['44', '47', '48', '49', '50'],
  all: ['26', '30', '41', '42', '43', '44', '47', '48', '49', '50'],
} as const;
export type Split = keyof typeof SPLITS;

/** 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 (adversarial, no answer in the talk) is left out. */
export const CATEGORIES = [1, 2, 3, 4] as const;
export const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

export interface Turn {
  /** "D3:5": session 3, turn 5. */
  diaId: string;
  session: number;
  /** Place in its session, from 0. */
  index: number;
  speaker: string;
  text: string;
  /** What an image the speaker shared shows (BLIP's caption), when there was one. */
  caption?: string;
}

export interface Session {
  number: number;
  /** When it took place (the data gives minutes, no zone: read as UTC). */
  time: Date;
  /** "8 May 2023". */
  day: string;
}

export interface Question {
  /** "26:12": conversation and place in its qa list. */
  id: string;
  question: string;
  answer: string;
  category: number;
  /** The turns that hold the answer, as dia ids of this conversation (see evidenceIds). */
  evidence: string[];
}

/** One of the data's per-session observations: a fact a speaker stated, and the turns that state it. */
export interface Fact {
  text: string;
  /** Dia ids of this conversation (see evidenceIds). */
  evidence: string[];
}

export interface Conversation {
  id: string;
  speakers: [string, string];
  sessions: Session[];
  turns: Turn[];
  questions: Question[];
  /** The data's observations, every session's (the retention section's ground truth: bench-retention.ts). */
  facts: Fact[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → that minute, UTC. */
export function parseSessionTime(text: string): Date {
  const match = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) ([A-Za-z]+),? (\d{4})$/i.exec(text.trim());
  const month = MONTHS.indexOf(match?.[5]?.toLowerCase() ?? '');
  if (!match || month < 0) throw new Error(`unreadable LoCoMo session date: ${JSON.stringify(text)}`);
  const hour = (Number(match[1]) % 12) + (match[3]?.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(match[6]), month, Number(match[4]), hour, Number(match[2])));
}

/**
 * The evidence as dia ids of the conversation. The data has a few irregular entries ("D8:6; D9:17",
 * "D30:05", "D:11:26"): split and normalised; ids naming no turn are dropped.
 */
export function evidenceIds(raw: readonly string[], known: ReadonlySet<string>): string[] {
  const ids = raw
    .flatMap((entry) => entry.split(/[\s;,]+/))
    .flatMap((entry) => {
      const match = /^D:?(\d+):0*(\d+)$/.exec(entry.trim());
      return match ? [`D${Number(match[1])}:${match[2]}`] : [];
    });
  return [...new Set(ids)].filter((id) => known.has(id));
}

export const sessionOf = (diaId: string): number => Number(/^D(\d+):/.exec(diaId)?.[1] ?? Number.NaN);

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

function readConversation(id: string, raw: Record<string, unknown>): Conversation {
  const sessions: Session[] = [];
  const turns: Turn[] = [];
  for (let number = 1; Array.isArray(raw[`session_${number}`]); number++) {
    const time = parseSessionTime(String(raw[`session_${number}_date_time`]));
    sessions.push({ number, time, day: `${time.getUTCDate()} ${MONTHS[time.getUTCMonth()]?.replace(/^./, (c) => c.toUpperCase())} ${time.getUTCFullYear()}` });
    for (const [index, turn] of (raw[`session_${number}`] as RawTurn[]).entries()) {
      turns.push({
        diaId: turn.dia_id,
        session: number,
        index,
        speaker: turn.speaker,
        text: turn.text,
        ...(turn.blip_caption ? { caption: turn.blip_caption } : {}),
      });
    }
  }
  const known = new Set(turns.map((turn) => turn.diaId));
  const qa = raw.qa as Array<{ question: string; answer?: unknown; adversarial_answer?: unknown; evidence?: string[]; category: number }>;
  const questions = qa.map((q, i) => ({
    id: `${id}:${i}`,
    question: q.question,
    answer: String(q.answer ?? q.adversarial_answer ?? ''),
    category: q.category,
    evidence: evidenceIds(q.evidence ?? [], known),
  }));
  const facts: Fact[] = [];
  for (let number = 1; number <= sessions.length; number++) {
    const observed = (raw[`session_${number}_observation`] ?? {}) as Record<string, Array<[string, string | string[]]>>;
    for (const list of Object.values(observed)) {
      for (const [text, ids] of list) facts.push({ text, evidence: evidenceIds(Array.isArray(ids) ? ids : [ids], known) });
    }
  }
  return { id, speakers: [String(raw.speaker_a), String(raw.speaker_b)], sessions, turns, questions, facts };
}

/** The conversations of `ids` (all ten by default), in that order. */
export function loadLocomo(ids: readonly string[] = SPLITS.all, file = LOCOMO_FILE): Conversation[] {
  const data = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as Record<string, Record<string, unknown>>;
  return ids.map((id) => {
    const raw = data[id];
    if (!raw) throw new Error(`conversation ${id} is not in ${file}`);
    return readConversation(id, raw);
  });
}

// ---------------------------------------------------------------------------------------------
// Metrics over a ranking: the dia id of each hit, best first, null for a hit that is no turn
// (a bank section, a summary, the synthesis), which takes its rank and counts as a miss there.

export type Ranking = ReadonlyArray<string | null>;

/** The rank (from 1) of the first evidence turn in the ranking, or null. */
export function firstEvidenceRank(ranking: Ranking, evidence: readonly string[]): number | null {
  const at = ranking.findIndex((id) => id !== null && evidence.includes(id));
  return at < 0 ? null : at + 1;
}

/**
 * recall@k: the share of the question's evidence turns among the first k hits (a question with two
 * evidence turns and one of them found scores 0.5), averaged over questions. The reading that
 * reproduces the figures of issue 23 (0.526 for live-mem, 0.521 for the library, all ten conversations).
 */
export const recallAt = (ranking: Ranking, evidence: readonly string[], k: number): number =>
  evidence.length === 0 ? 0 : evidence.filter((id) => ranking.slice(0, k).includes(id)).length / evidence.length;

/** hit@k: 1 when any evidence turn is among the first k hits (the looser reading of recall@k). */
export const hitAt = (ranking: Ranking, evidence: readonly string[], k: number): number => {
  const rank = firstEvidenceRank(ranking, evidence);
  return rank !== null && rank <= k ? 1 : 0;
};

/** 1 / the rank of the first evidence turn within the ranking (10 hits here), 0 without one. */
export const reciprocalRank = (ranking: Ranking, evidence: readonly string[]): number => {
  const rank = firstEvidenceRank(ranking, evidence);
  return rank === null ? 0 : 1 / rank;
};

/** Session Hit@1: the top hit is a turn of a session that holds an evidence turn. */
export const sessionHitAt1 = (ranking: Ranking, evidence: readonly string[]): number => {
  const top = ranking[0];
  return top !== null && top !== undefined && evidence.some((id) => sessionOf(id) === sessionOf(top)) ? 1 : 0;
};

export interface Scores {
  questions: number;
  recall1: number;
  recall5: number;
  recall10: number;
  mrr: number;
  sessionHit1: number;
  /** An evidence turn in the first 5 at all (the looser reading). */
  hit5: number;
}

/** The means over questions (a question whose evidence names no turn counts as a miss); none gives zeros. */
export function score(results: ReadonlyArray<{ ranking: Ranking; evidence: readonly string[] }>): Scores {
  const mean = (metric: (ranking: Ranking, evidence: readonly string[]) => number) =>
    results.length === 0 ? 0 : results.reduce((sum, { ranking, evidence }) => sum + metric(ranking, evidence), 0) / results.length;
  return {
    questions: results.length,
    recall1: mean((r, e) => recallAt(r, e, 1)),
    recall5: mean((r, e) => recallAt(r, e, 5)),
    recall10: mean((r, e) => recallAt(r, e, 10)),
    mrr: mean(reciprocalRank),
    sessionHit1: mean(sessionHitAt1),
    hit5: mean((r, e) => hitAt(r, e, 5)),
  };
}
