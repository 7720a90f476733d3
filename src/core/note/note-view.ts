import type { Anchor } from '../anchors/anchor.js';
import { parseNoteFile } from './note-file.js';
import { stampToIso, type NoteName } from '../note-name.js';

/** A note as tools return it: its name's fields, completed or corrected by its front-matter. */
export interface NoteView {
  filename: string;
  timestamp: string;
  agent: string;
  category: string;
  tags: string[];
  content: string;
  /** The code it cites (core/anchors/), when it cites any. */
  anchors?: Anchor[];
}

export function toNoteView(name: NoteName, body: Buffer | string): NoteView {
  const parsed = parseNoteFile(typeof body === 'string' ? body : body.toString('utf8'));
  return {
    filename: name.filename,
    timestamp: parsed.timestamp ?? stampToIso(name.stamp),
    agent: parsed.agent ?? name.agent,
    category: parsed.category ?? name.category,
    tags: parsed.tags ?? [],
    content: parsed.content,
    ...(parsed.anchors ? { anchors: parsed.anchors } : {}),
  };
}
