/**
 * The LoCoMo data of section 21 (bench-locomo.ts) and its metrics: the ten conversations of
 * bench/locomo/locomo10.json.gz (see its README: source, licence, what was changed) read with
 * node:zlib, nothing fetched; the one way a conversation becomes notes (writeConversation: section 21
 * and scripts/locomo-recall.ts write it alike, through the core they are given); recall@k, MRR and
 * session Hit@1 over a ranking of turns, the same read over the sessions those turns belong to (the
 * unit MemPalace and LongMemEval report), and the grep baseline ranked beside live-mem and the BM25
 * library. All pure but writeConversation.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { Caller } from '../src/core/caller.js';
import type { Core } from '../src/core/core.js';

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
// A conversation as notes: one live note per turn, by its speaker, dated by its session.

/** A turn as its note says it: the session's day first, then the text, then what a shared image shows. */
export const noteText = (turn: Turn, day: string): string => `[${day}] ${turn.text}${turn.caption ? ` [shares a photo: ${turn.caption}]` : ''}`;

/** A note's text on one line, as memory_context prints a recent note. */
export const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

/** What writeConversation wrote, by dia id and by note filename. */
export interface WrittenConversation {
  /** Dia id → its note's content (noteText). */
  texts: Map<string, string>;
  /** Note filename → dia id. */
  turnOf: Map<string, string>;
  /** Dia id → note filename. */
  filenameOf: Map<string, string>;
}

/**
 * Every turn of `conversation` written into `spaceId` through `core` as a live note by its speaker
 * (category observation), dated by its session: `clock.now`, what the core's clock reads, is set to the
 * session's time plus the turn's place in seconds before each write, and the note must carry that
 * time (the talk's own, or since/until and the newest notes would measure the run's).
 */
export async function writeConversation(
  core: Pick<Core, 'notes'>,
  caller: Caller,
  spaceId: string,
  conversation: Conversation,
  clock: { now: number },
): Promise<WrittenConversation> {
  const written: WrittenConversation = { texts: new Map(), turnOf: new Map(), filenameOf: new Map() };
  const days = new Map(conversation.sessions.map((session) => [session.number, session]));
  for (const turn of conversation.turns) {
    const session = days.get(turn.session);
    if (!session) throw new Error(`turn ${turn.diaId} of conversation ${conversation.id} has no session`);
    const at = session.time.getTime() + turn.index * 1000;
    clock.now = at;
    const content = noteText(turn, session.day);
    written.texts.set(turn.diaId, content);
    const { filename, timestamp } = await core.notes.write(caller, { space_id: spaceId, agent: turn.speaker, category: 'observation', content });
    if (Date.parse(timestamp) !== at) throw new Error(`turn ${turn.diaId} of ${spaceId} was dated ${timestamp}, not ${new Date(at).toISOString()}`);
    written.turnOf.set(filename, turn.diaId);
    written.filenameOf.set(turn.diaId, filename);
  }
  return written;
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

// ---------------------------------------------------------------------------------------------
// The same over sessions: a hit stands for the session its turn belongs to. The field's retrieval
// figures on LoCoMo and LongMemEval are of this kind (MemPalace's benchmarks/locomo_bench.py retrieves
// session documents and scores the share of evidence sessions among them; LongMemEval's
// src/retrieval/eval_utils.py scores recall_any and recall_all, and maps turn rankings to sessions in
// evaluate_retrieval_turn2session, widening k until k distinct sessions are in).

/** The sessions of the first k hits that are turns, each once, in rank order. */
export function sessionsOf(ranking: Ranking, k = ranking.length): number[] {
  const sessions: number[] = [];
  for (const id of ranking.slice(0, k)) {
    if (id === null || !/^D\d+:/.test(id)) continue;
    const session = sessionOf(id);
    if (!sessions.includes(session)) sessions.push(session);
  }
  return sessions;
}

const evidenceSessions = (evidence: readonly string[]): number[] => [...new Set(evidence.map(sessionOf))];

/**
 * Session recall@k: the share of the question's evidence sessions (the sessions of its evidence turns)
 * among the sessions of the first k hits. A question with evidence in sessions 3 and 7 whose top 10
 * holds turns of sessions 3, 4 and 9 scores 0.5.
 */
export const sessionRecallAt = (ranking: Ranking, evidence: readonly string[], k: number): number => {
  const wanted = evidenceSessions(evidence);
  if (wanted.length === 0) return 0;
  const found = sessionsOf(ranking, k);
  return wanted.filter((session) => found.includes(session)).length / wanted.length;
};

/** Session hit@k: 1 when any evidence session is among the sessions of the first k hits (LongMemEval's recall_any@k). */
export const sessionHitAt = (ranking: Ranking, evidence: readonly string[], k: number): number => (sessionRecallAt(ranking, evidence, k) > 0 ? 1 : 0);

/**
 * Session recall over the first k distinct sessions of a deeper ranking (LongMemEval's turn→session reading,
 * and the closest to MemPalace's, which retrieves k session documents): the turns are read down the ranking
 * until k sessions are in, or the ranking ends.
 */
export const distinctSessionRecallAt = (ranking: Ranking, evidence: readonly string[], k: number): number => {
  const wanted = evidenceSessions(evidence);
  if (wanted.length === 0) return 0;
  const found = sessionsOf(ranking).slice(0, k);
  return wanted.filter((session) => found.includes(session)).length / wanted.length;
};

/** 1 / the rank of the first hit that is a turn of an evidence session, 0 without one. */
export const sessionReciprocalRank = (ranking: Ranking, evidence: readonly string[]): number => {
  const wanted = evidenceSessions(evidence);
  const at = ranking.findIndex((id) => id !== null && /^D\d+:/.test(id) && wanted.includes(sessionOf(id)));
  return at < 0 ? 0 : 1 / (at + 1);
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
  /** Over the sessions of the first 10 hits: the share of the evidence sessions, any of them, MRR. */
  sessionRecall10: number;
  sessionHit10: number;
  sessionMrr: number;
  /** Over the first 10 distinct sessions of the deeper ranking (the first 10 hits when none was given). */
  sessionRecall10Distinct: number;
}

/** The means over questions (a question whose evidence names no turn counts as a miss); none gives zeros. */
export function score(results: ReadonlyArray<{ ranking: Ranking; evidence: readonly string[]; deep?: Ranking }>): Scores {
  const mean = (metric: (ranking: Ranking, evidence: readonly string[], deep: Ranking) => number) =>
    results.length === 0 ? 0 : results.reduce((sum, { ranking, evidence, deep }) => sum + metric(ranking, evidence, deep ?? ranking), 0) / results.length;
  return {
    questions: results.length,
    recall1: mean((r, e) => recallAt(r, e, 1)),
    recall5: mean((r, e) => recallAt(r, e, 5)),
    recall10: mean((r, e) => recallAt(r, e, 10)),
    mrr: mean(reciprocalRank),
    sessionHit1: mean(sessionHitAt1),
    hit5: mean((r, e) => hitAt(r, e, 5)),
    sessionRecall10: mean((r, e) => sessionRecallAt(r, e, 10)),
    sessionHit10: mean((r, e) => sessionHitAt(r, e, 10)),
    sessionMrr: mean(sessionReciprocalRank),
    sessionRecall10Distinct: mean((_, e, d) => distinctSessionRecallAt(d, e, 10)),
  };
}

// ---------------------------------------------------------------------------------------------
// The grep baseline: what an agent with plain files and `grep -i -w -F -e word …` would rank.

/** Words a question asks with that say nothing of its subject (English function words, question words, the
 * tails of contractions and possessives split off at the apostrophe). */
const GREP_STOP_WORDS = new Set(
  `s t d ll m re ve a about after all also an and any are as at be been before being but by can could did do does doing for from had has have
  he her hers him his how i if in into is it its me my of on or our she so some than that the their them then there these they
  this those to up was we were what when where which who whom whose why will with would you your`.split(/\s+/),
);

/** The question's content words: lowercased runs of letters and digits, the stop words left out, each once. */
export const grepWords = (question: string): string[] => [
  ...new Set((question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !GREP_STOP_WORDS.has(word))),
];

/**
 * The grep baseline over a conversation's turns: each turn scored by how many of the question's content
 * words it holds as whole words, case-insensitively (`grep -i -w`, no stemming, no weighting); turns
 * holding none are left out; ties keep the conversation's order (grep's output order). Returns the first
 * `limit` dia ids.
 */
export function grepRanker(turns: ReadonlyArray<{ diaId: string; text: string }>): (question: string, limit: number) => string[] {
  const words = turns.map((turn) => new Set(turn.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []));
  return (question, limit) => {
    const wanted = grepWords(question);
    const scored: Array<{ at: number; count: number }> = [];
    for (const [at, held] of words.entries()) {
      const count = wanted.filter((word) => held.has(word)).length;
      if (count > 0) scored.push({ at, count });
    }
    scored.sort((a, b) => b.count - a.count || a.at - b.at);
    return scored.slice(0, limit).map(({ at }) => turns[at]?.diaId as string);
  };
}
