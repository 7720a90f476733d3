import type { SearchHit } from '../../search/types.js';
import { bankRef, type DocMeta, noteDocId, noteMeta, parsePreimageDocId, preimageMeta, SYNTHESIS_DOC_ID } from './documents.js';
import type { BankFeeder } from './feed-bank.js';
import type { HistoryFeeder } from './feed-history.js';
import type { SummariesFeeder } from './feed-summaries.js';
import { ENTRY_BYTES, type IndexDocuments } from './index-documents.js';
import { type Candidate, isDerivedSource } from './ranking.js';
import type { Places } from './timeline.js';

/**
 * What the memory estimate counts per parsed note description (measured: 100,000 `noteMeta` results
 * held in a Map took 530 bytes each on Node 20, with their strings).
 */
const NOTE_META_BYTES = 530;
/**
 * Note descriptions kept parsed (a filter asks one per candidate): at 530 bytes each, a million of
 * them were half a gigabyte beside a 1M-note index; this many are 53 MB, and parsing one again costs
 * about a microsecond.
 */
const NOTE_METAS_KEPT = 100_000;

/** A candidate's kind (`candidate`): a note without an agent (or a document not described), derived text, a note by agents[kind - KIND_AGENT]. */
const KIND_OTHER = 1;
const KIND_DERIVED = 2;
const KIND_AGENT = 3;

/** A note's place in `places` (-1 for anything else, or a note not placed). */
function notePlace(meta: DocMeta | null, places: Places): number {
  return meta && (meta.source === 'live' || meta.source === 'history') ? places.of(meta.id, meta.ref, meta.consolidation_id) : -1;
}

/**
 * What a space index's documents are (documents.ts DocMeta), from their ids and what the feeders keep
 * beside, and a search hit as the ranking weighs it.
 */
export class Describer {
  private readonly noteMetas = new Map<string, DocMeta | null>();
  /**
   * What the ranking asks of each search candidate (`candidate`), kept by the engine's document number
   * in two typed arrays: a pool of 200 recurs from query to query, and an array read each costs a
   * fraction of a lookup by id (three or four Map lookups a candidate were most of the re-ranking's
   * cost at 10,000 notes). `kinds`: 0 not known yet, else KIND_*; `places`: the note's place in
   * `placesOf` (-1 none, -2 not known yet). Dropped when the engine numbers its documents anew.
   */
  private byDoc: { index: IndexDocuments['index']; numbering: number; kinds: Int32Array; places: Int32Array; placesOf: Places | null } | null = null;
  /** The agents of candidate notes, numbered for `byDoc.kinds`. */
  private readonly agents: string[] = [];
  private readonly agentNumbers = new Map<string, number>();

  constructor(
    private readonly docs: IndexDocuments,
    private readonly feeders: { bank: BankFeeder; history: HistoryFeeder; summaries: SummariesFeeder },
  ) {}

  /** What a document is, from its id (notes) or what the index keeps beside (sections, summaries). */
  meta(id: string): DocMeta | null {
    // Note ids never change meaning: their descriptions are parsed once (filters ask per candidate).
    let note = this.noteMetas.get(id);
    if (note === undefined && (id.startsWith('n:') || id.startsWith('h:'))) {
      note = noteMeta(id);
      if (this.noteMetas.size >= NOTE_METAS_KEPT) this.noteMetas.clear();
      this.noteMetas.set(id, note);
    }
    if (note) return note;
    if (id === SYNTHESIS_DOC_ID) return { id, source: 'synthesis', level: null, ref: '_synthesis.md' };
    if (id.startsWith('b:')) {
      const section = this.feeders.bank.section(id);
      return section ? { id, source: 'bank', level: null, ref: bankRef(section) } : null;
    }
    const preimage = parsePreimageDocId(id);
    if (preimage) {
      const compaction = this.feeders.history.preimages.get(preimage.compactionId);
      const section = compaction?.sections[preimage.i];
      return compaction && section ? preimageMeta(preimage.compactionId, preimage.i, compaction.committed_at, section) : null;
    }
    if (id.startsWith('m:')) {
      const summary = this.feeders.summaries.coverage.get(id.slice(2));
      return summary ? { id, source: 'summary', level: summary.level, ref: id.slice(2), range_start: summary.range_start, range_end: summary.range_end } : null;
    }
    return null;
  }

  /** A note document forgotten: its description leaves with it. */
  forget(id: string): void {
    this.noteMetas.delete(id);
  }

  /** A search hit as the ranking weighs it (ranking.ts Candidate): who wrote it, whether it is derived text, its place in `places`. */
  candidate(hit: SearchHit, places: Places): Candidate {
    const doc = hit.doc;
    if (doc === undefined) {
      const meta = this.meta(hit.id);
      return this.candidateOf(hit, this.kindOf(meta), notePlace(meta, places));
    }
    const byDoc = this.arraysFor(doc, places);
    let kind = byDoc.kinds[doc] as number;
    let place = byDoc.places[doc] as number;
    if (kind === 0 || place === -2) {
      const meta = this.meta(hit.id);
      kind = this.kindOf(meta);
      place = notePlace(meta, places);
      // A document not described (yet) is asked again next time.
      if (meta) {
        byDoc.kinds[doc] = kind;
        byDoc.places[doc] = place;
      }
    }
    return this.candidateOf(hit, kind, place);
  }

  /**
   * The note at a place of `places` as a candidate scoring `score`, if the index holds it (the
   * ranking's answer turns, ranking.ts `answerPlaces`), with nothing read from the store, no scan and no
   * description parsed: a live note is named by live/'s listing, which says its agent; a consolidated
   * one is looked for at the document number as far from `near`'s (a hit of the same run,
   * SearchHit.doc) as its place is from `near`'s, since a consolidation's notes are indexed in their
   * run's order — and taken only if the timeline places it there.
   */
  answerAt(place: number, places: Places, near: { place: number; doc: number | undefined }, score: number): Candidate | null {
    const index = this.docs.index;
    const { cid, i } = places.locate(place);
    if (cid === null) {
      const note = places.liveAt(i);
      const id = noteDocId(note.filename);
      return index.has(id) ? { id, score, agent: note.agent, derived: false, place } : null;
    }
    if (near.doc === undefined || !index.idAt) return null;
    const doc = near.doc + place - near.place;
    const id = index.idAt(doc);
    const prefix = `h:${cid}/`;
    return id?.startsWith(prefix) && places.of(id, id.slice(prefix.length), cid) === place ? this.candidate({ id, score, doc }, places) : null;
  }

  /** The arrays by document number, for the engine's current numbering and `places`, long enough for `doc`. */
  private arraysFor(doc: number, places: Places): NonNullable<Describer['byDoc']> {
    const index = this.docs.index;
    if (this.byDoc?.index !== index || this.byDoc.numbering !== index.numbering) {
      const size = Math.max(1024, doc + 1);
      this.byDoc = { index, numbering: index.numbering, kinds: new Int32Array(size), places: new Int32Array(size).fill(-2), placesOf: places };
      this.agents.length = 0;
      this.agentNumbers.clear();
    }
    const byDoc = this.byDoc;
    if (doc >= byDoc.kinds.length) {
      const size = Math.max(doc + 1, byDoc.kinds.length * 2);
      const kinds = new Int32Array(size);
      kinds.set(byDoc.kinds);
      const placed = new Int32Array(size).fill(-2);
      placed.set(byDoc.places);
      byDoc.kinds = kinds;
      byDoc.places = placed;
    }
    if (byDoc.placesOf !== places) {
      byDoc.places.fill(-2);
      byDoc.placesOf = places;
    }
    return byDoc;
  }

  private kindOf(meta: DocMeta | null): number {
    if (!meta) return KIND_OTHER;
    if (isDerivedSource(meta.source)) return KIND_DERIVED;
    if (meta.agent === undefined) return KIND_OTHER;
    let number = this.agentNumbers.get(meta.agent);
    if (number === undefined) {
      number = this.agents.push(meta.agent) - 1;
      this.agentNumbers.set(meta.agent, number);
    }
    return KIND_AGENT + number;
  }

  private candidateOf(hit: SearchHit, kind: number, place: number): Candidate {
    return { id: hit.id, score: hit.score, agent: kind >= KIND_AGENT ? this.agents[kind - KIND_AGENT] : undefined, derived: kind === KIND_DERIVED, place };
  }

  bytes(): number {
    return this.noteMetas.size * NOTE_META_BYTES + (this.byDoc ? this.byDoc.kinds.byteLength + this.byDoc.places.byteLength : 0);
  }
}

/** The filenames a space index keeps (live, and history's when gathered), costed by the average of a sample. */
export function filenamesBytes(live: ReadonlySet<string>, history: ReadonlySet<string> | null): number {
  const names = live.size + (history?.size ?? 0);
  if (names === 0) return 0;
  let sampled = 0;
  let chars = 0;
  for (const name of live.size > 0 ? live : (history ?? [])) {
    chars += name.length;
    if (++sampled >= 32) break;
  }
  return names * (ENTRY_BYTES + chars / sampled);
}
