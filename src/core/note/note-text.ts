/**
 * A note's text as search reads it and as prompts show it beside other text: the index's text (content
 * and tags), and live_search's texts, lowercased, with what a search process knows of them before
 * reading a note (recall's `liveTexts`, handed to the note service).
 */

/** A note's indexed text: its content and tags. */
export const noteText = (content: string, tags: readonly string[]): string => (tags.length > 0 ? `${content}\n${tags.join(' ')}` : content);

/** A note's texts as live_search matches a needle against them: its content and each tag, lowercased. */
export const searchableTexts = (note: { content: string; tags: readonly string[] }): string[] => [note.content, ...note.tags].map((text) => text.toLowerCase());

/** Whether one of a note's texts holds the (lowercased) needle. */
export const matchesNeedle = (texts: readonly string[], needle: string): boolean => texts.some((text) => text.includes(needle));

/** What live_search knows of a note before reading it, for one needle. */
export type LiveMatch = 'match' | 'no-match' | 'unknown';

/** What live_search knows of a space's live notes without reading them (recall's `liveTexts`). */
export interface LiveTextsLookup {
  /** For one needle (lowercased): whether a note's known texts hold it, do not, or are unknown. */
  matcher(needle: string): (filename: string) => LiveMatch;
  /** Hands back the texts of a note read (`searchableTexts`): kept, and carried by the next snapshot. */
  remember(filename: string, texts: readonly string[]): void;
}
