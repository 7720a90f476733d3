import { readBankFiles } from '../bank/bank-files.js';
import { keepsPreimages } from '../commit/history-record.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { quotesOf, quotingLines } from './quotes.js';
import type { ForgetDeps, Located } from './types.js';

/**
 * What a forget cannot rewrite and so reports for a person to review: the bank text that may derive
 * from the notes, by provenance (bankReview), and the lines that still quote them (textHits). Both are
 * read before the forget takes the notes, and their provenance, away.
 */

/**
 * Bank text that may derive from the notes, by provenance, read before the forget rewrites it: the
 * sections that cite them (`basis: 'citation'`, with `sections`), or, for a consolidation that cited
 * nothing (older ones, the Python reply format), the bank files it wrote and the synthesis
 * (`basis: 'consolidation'`).
 */
export async function bankReview({ corpus, sectionsOf }: ForgetDeps, spaceId: string, located: readonly Located[]) {
  const cids = [...new Set(located.flatMap((note) => (note.consolidation_id ? [note.consolidation_id] : [])))];
  const records = (await Promise.all(cids.map((cid) => corpus.record(spaceId, cid)))).filter((record) => record !== null);
  return Promise.all(
    records.map(async (record) => {
      const notes = located.filter((note) => note.consolidation_id === record.id).map((note) => note.filename);
      const cited = (await Promise.all(notes.map((note) => sectionsOf?.(spaceId, note) ?? []))).flat();
      const sections = [...new Map(cited.map((s) => [`${s.filename}#${s.path.join(' > ')}`, { filename: s.filename, path: s.path }])).values()];
      return {
        consolidation_id: record.id,
        basis: sections.length > 0 ? ('citation' as const) : ('consolidation' as const),
        bank_files: sections.length > 0 ? [...new Set(sections.map((s) => s.filename))] : record.bank_files.map((file) => file.filename),
        ...(sections.length > 0 ? { sections } : {}),
        synthesis: record.kind === 'consolidation',
        notes,
      };
    }),
  );
}

export type BankReview = Awaited<ReturnType<typeof bankReview>>;

/** A text that quotes the notes, by line. */
export interface TextHit {
  where: 'synthesis' | 'bank' | 'bank_history';
  file: string;
  lines: number[];
  consolidation_id?: string;
  path?: string[];
}

/**
 * Where the notes' words are still found, verbatim, by line (quotes.ts), read before the forget
 * takes the notes away: the synthesis, the bank files, earlier bank text (pre-images of corrections
 * and compactions). A forget rewrites none of them: a person does (`bank_write`, with `secret`).
 * Lines, not text: the receipt repeats nothing of what is forgotten.
 */
export async function textHits({ context, corpus }: ForgetDeps, spaceId: string, located: readonly Located[]): Promise<TextHit[]> {
  const names = new Set(located.map((note) => note.filename));
  const notes = (await corpus.level0(spaceId)).filter((note) => names.has(note.filename));
  const quotes = quotesOf((await corpus.read(spaceId, notes)).map((note) => note.content));
  const hits: TextHit[] = [];
  const synthesis = await context.storage.get(spaceKeys(spaceId).synthesis);
  const synthesisLines = synthesis ? quotingLines(synthesis.body.toString('utf8'), quotes) : [];
  if (synthesisLines.length > 0) hits.push({ where: 'synthesis', file: SYNTHESIS_FILE, lines: synthesisLines });
  for (const [filename, file] of await readBankFiles(context, spaceId)) {
    const lines = quotingLines(file.content, quotes);
    if (lines.length > 0) hits.push({ where: 'bank', file: filename, lines });
  }
  for (const record of (await corpus.history(spaceId)).filter(keepsPreimages)) {
    const preimages = await corpus.historyPreimages(spaceId, record.id).catch((error: unknown) => corpus.skipDamaged('forget', error, []));
    for (const preimage of preimages) {
      const lines = quotingLines(preimage.content, quotes);
      if (lines.length > 0) hits.push({ where: 'bank_history', consolidation_id: record.id, file: preimage.filename, path: preimage.path, lines });
    }
  }
  return hits;
}
