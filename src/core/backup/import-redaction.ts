import { redactForWrite, type KindCount, type RedactMode } from '../redact/redact.js';

/** What an import kept out of one file: the kinds of secrets masked, the `<private>` spans removed. */
export interface FileRedaction {
  path: string;
  redacted: KindCount[];
  private_removed?: number;
}

/**
 * An archive's text goes through the same check as a `live_note` (LIVE_MEM_REDACT), after its
 * checksums were verified as the archive holds it: live notes (their `<private>` spans removed, as
 * a note's writer asked), bank files and the synthesis (masked only: a `<private>` the model wrote
 * is no writer's request). History, summaries and metadata are records of what was, and are
 * imported as they are. `refuse` throws `invalid_input` naming the file and the kinds.
 */
export function redactImported(path: string, body: Buffer, mode: RedactMode): { body: Buffer; report?: FileRedaction } {
  const note = path.startsWith('live/') && path.endsWith('.md');
  const bankText = (path.startsWith('bank/') && path.endsWith('.md')) || path === '_synthesis.md';
  if (!note && !bankText) return { body };
  const text = body.toString('utf8');
  const result = redactForWrite(text, mode, `the archive's ${path}`, {
    honourPrivate: note,
    refusalHint: 'Nothing was imported: import it with LIVE_MEM_REDACT=mask to have them masked',
  });
  if (result.redacted.length === 0 && result.private_removed === 0) return { body };
  return {
    body: Buffer.from(result.text, 'utf8'),
    report: { path, redacted: result.redacted, ...(result.private_removed > 0 ? { private_removed: result.private_removed } : {}) },
  };
}
