import type { KindCount, RedactMode } from '../redact/redact.js';
import { redactFields } from '../redact/stored-text.js';

/** What an import kept out of one file: the kinds of secrets masked, the `<private>` spans removed. */
export interface FileRedaction {
  path: string;
  redacted: KindCount[];
  private_removed?: number;
}

/** The JSON files of a space's content (space-content.ts): its meta, history records and pre-images, summaries. */
const isJson = (path: string): boolean => path.endsWith('.json');

/** The layout of a JSON file as written (`null, 2`, `null, 1` or compact, a final newline or not), kept when it is rewritten. */
function serializeLike(original: string, value: unknown): string {
  const indent = /^[{[]\n( +)/.exec(original)?.[1]?.length ?? 0;
  return `${JSON.stringify(value, null, indent)}${original.endsWith('\n') ? '\n' : ''}`;
}

/**
 * An archive's content goes through the pass every caller's text takes (redact/stored-text.ts,
 * LIVE_MEM_REDACT), after its checksums were verified as the archive holds it: every file of the
 * space's content, not only its notes — the rules, the bank and the synthesis, the meta (its
 * description, its owner, any field), history (records with their reasons, the notes a
 * consolidation took, the pre-images of corrections) and summaries. `<private>` spans are dropped
 * from notes, live or in history (a writer's request); elsewhere a `<private>` is text a model or a
 * person wrote as such. A JSON file is masked value by value (a name or a version is left as it
 * is: it must still name what it names) and written in its own layout; one that does not parse is
 * masked as text. `refuse` throws `invalid_input` naming the file and the kinds.
 */
export function redactImported(path: string, body: Buffer, mode: RedactMode): { body: Buffer; report?: FileRedaction } {
  const honourPrivate = path.startsWith('live/') || /^history\/[^/]+\/notes\.json$/.test(path);
  if (mode === 'off' && !honourPrivate) return { body };
  const options = {
    honourPrivate,
    refuseEmptied: false,
    label: () => `the archive's ${path}`,
    refusalHint: 'Nothing was imported: import it with LIVE_MEM_REDACT=mask to have them masked',
  };
  const text = body.toString('utf8');
  let parsed: { ok: true; value: unknown } | { ok: false } = { ok: false };
  if (isJson(path)) {
    try {
      parsed = { ok: true, value: JSON.parse(text) };
    } catch {
      // Not JSON: masked as the text it is (an import refuses a meta that is not JSON before this).
    }
  }
  const result = parsed.ok ? redactFields(parsed.value, mode, options) : redactFields(text, mode, options);
  if (result.redacted.length === 0 && result.private_removed === 0) return { body };
  const written = parsed.ok ? serializeLike(text, result.value) : (result.value as string);
  return {
    body: Buffer.from(written, 'utf8'),
    report: { path, redacted: result.redacted, ...(result.private_removed > 0 ? { private_removed: result.private_removed } : {}) },
  };
}
