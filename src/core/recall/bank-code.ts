import type { Checkout } from '../../shared/checkout.js';
import { mapLimit } from '../../shared/concurrency.js';
import type { Anchor } from '../anchors/anchor.js';
import { type CheckedAnchor, checkedAnchor, citedAs, codeLabel } from '../anchors/note-anchors.js';
import { MAX_ANCHORS } from '../anchors/stored.js';
import type { CoreContext } from '../context.js';
import { bankSections } from '../markdown/sections.js';
import { compareNewestFirst, parseNoteName } from '../note-name.js';
import type { Corpus } from '../note/corpus.js';
import type { Sources } from './sources.js';

/**
 * The code a bank statement stands on: the anchors of the notes consolidation wrote its section from
 * (their provenance: recall/sources.ts). A section's anchors are those of the notes every consolidation
 * that wrote it cited, newest note first, at most MAX_ANCHORS; a section no longer in the file has none
 * (its statements are gone), and a file a plan wrote whole has its notes' anchors as a whole (section '').
 * Nothing is stored for it: the records and the notes' front-matter are the truth, read through the
 * corpus's caches, and each reader checks them against its own checkout.
 */
export interface SectionCode {
  filename: string;
  /** Its heading path, "Top > Sub"; '' = the file as a whole. */
  section: string;
  anchors: Anchor[];
}

/** A section's anchor as a reader is shown it: where in the bank, what it cites, its state in the reader's checkout. */
export type BankCodeCheck = CheckedAnchor & { filename: string; section: string };

/** Drifted statements a consolidation prompt lists, at most. */
const MAX_DRIFT_LINES = 30;

const keyOf = (path: readonly string[]): string => path.map((part) => part.toLowerCase()).join('\u0000');
const anchorKey = (anchor: Anchor): string => `${anchor.path}:${anchor.lines?.join('-') ?? ''}#${anchor.symbol ?? ''} ${anchor.hash}`;

export function createBankCode(context: CoreContext, corpus: Corpus, sources: Sources) {
  /** The anchored sections of a bank file as it reads now (`content`), in the file's order. */
  async function sectionsOf(spaceId: string, filename: string, content: string): Promise<SectionCode[]> {
    const written = await sources.ofSection(spaceId, filename);
    if (written.length === 0) return [];
    const present = new Map<string, string[]>([['', []]]);
    for (const section of bankSections(filename, content)) present.set(keyOf(section.path), section.path);
    const notesOf = new Map<string, Map<string, string>>(); // section key → note → consolidation
    for (const entry of written) {
      const key = keyOf(entry.path);
      if (!present.has(key)) continue;
      const notes = notesOf.get(key) ?? new Map<string, string>();
      for (const note of entry.notes) if (!notes.has(note)) notes.set(note, entry.consolidation_id);
      notesOf.set(key, notes);
    }
    const sections: SectionCode[] = [];
    for (const [key, path] of present) {
      const notes = notesOf.get(key);
      if (!notes) continue;
      const newest = [...notes.keys()].sort((a, b) => {
        const [x, y] = [parseNoteName(a), parseNoteName(b)];
        return x && y ? compareNewestFirst(x, y) : 0;
      });
      const texts = await mapLimit(newest, context.storage.parallelism, (note) =>
        corpus.historyNote(spaceId, notes.get(note) as string, note).catch(() => null),
      );
      const anchors = new Map<string, Anchor>();
      for (const text of texts) for (const anchor of text?.anchors ?? []) if (anchors.size < MAX_ANCHORS) anchors.set(anchorKey(anchor), anchor);
      if (anchors.size > 0) sections.push({ filename, section: path.join(' > '), anchors: [...anchors.values()] });
    }
    return sections;
  }

  /** The anchors of `files`' sections, each checked against the reader's checkout; none without one. */
  async function check(spaceId: string, files: ReadonlyArray<{ filename: string; content: string }>, checkout: Checkout | undefined): Promise<BankCodeCheck[]> {
    if (!checkout) return [];
    const perFile = await Promise.all(files.map((file) => sectionsOf(spaceId, file.filename, file.content)));
    return Promise.all(
      perFile
        .flat()
        .flatMap(({ filename, section, anchors }) => anchors.map(async (anchor) => ({ filename, section, ...(await checkedAnchor(checkout, anchor)) }))),
    );
  }

  return {
    sectionsOf,
    check,

    /** The bank's statements whose code drifted or is missing in `checkout`, a line each (at most MAX_DRIFT_LINES): what consolidation asks to repair. */
    async drift(spaceId: string, files: ReadonlyArray<{ filename: string; content: string }>, checkout: Checkout): Promise<string[]> {
      const stale = (await check(spaceId, files, checkout)).filter((code) => code.state === 'drifted' || code.state === 'missing');
      const lines = stale
        .slice(0, MAX_DRIFT_LINES)
        .map((code) => `- ${code.filename}${code.section ? ` > ${code.section}` : ''}: ${citedAs(code)} ${code.state}: ${code.detail}`);
      if (stale.length > MAX_DRIFT_LINES) lines.push(`- … and ${stale.length - MAX_DRIFT_LINES} more`);
      return lines;
    },

    /**
     * A read's result with the code of its bank files' sections (`code`, bank_read, bank_read_all, space_summary), where the
     * reader has a checkout and a section cites code; the result as it was otherwise.
     */
    async annotate<Result extends object>(
      result: Result,
      spaceId: string,
      files: ReadonlyArray<{ filename: string; content: string }>,
      checkout: Checkout | undefined,
    ) {
      const code = await check(spaceId, files, checkout);
      return code.length > 0 ? { ...result, code } : result;
    },

    /**
     * Each anchored section's label for `memory_context` ("code fresh", "code drifted …"), keyed `filename` NUL
     * `lowercased heading path`; the anchors of a file written whole go with its first section.
     */
    async labels(spaceId: string, files: ReadonlyArray<{ filename: string; content: string }>, checkout: Checkout | undefined) {
      const labels = new Map<string, { text: string; stale: boolean }>();
      if (!checkout) return labels; // nothing to check against: no label (a note's own says "unverifiable")
      for (const file of files) {
        const first = bankSections(file.filename, file.content)[0]?.path.join(' > ').toLowerCase() ?? '';
        const anchors = new Map<string, Anchor[]>();
        for (const code of await sectionsOf(spaceId, file.filename, file.content)) {
          const key = code.section === '' ? first : code.section.toLowerCase();
          anchors.set(key, [...(anchors.get(key) ?? []), ...code.anchors]);
        }
        for (const [key, cited] of anchors) {
          const label = await codeLabel(checkout, cited);
          if (label) labels.set(`${file.filename}\u0000${key}`, label);
        }
      }
      return labels;
    },
  };
}

export type BankCode = ReturnType<typeof createBankCode>;
