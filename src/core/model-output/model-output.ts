import { stripFenceEcho } from '../prompt-fence.js';
import { type RedactMode, refuseNewSecrets } from '../redact/redact.js';
import { screenDirectives, type WindowNote } from './directives.js';

/**
 * The one gate between a model's reply and the store: every model text that is stored passes it —
 * a consolidation plan's bank files, synthesis and reasons, the compressed synthesis, each summary,
 * each compaction digest. In order:
 * 1. the fence lines of the prompt it answers are dropped: they carry that prompt's nonce, drawn
 *    after every text the prompt showed was written, so a line bearing it can only be the model
 *    copying the prompt's framing — an echo, not an order to refuse the run for;
 * 2. a secret the place did not hold before is refused (redact.ts; not with LIVE_MEM_REDACT=off);
 * 3. a new line carrying an order no source vouches for is refused (directives.ts).
 * A refusal is `invalid_input` whose message names the place and why — never a secret — fit to go
 * back to the model in a retry (fenced: prompt-fence.ts's fenceReason); nothing is stored.
 */
export interface ModelText {
  /** Where the text goes, for refusals: `techContext.md`, `the synthesis`, `the summary`. */
  where: string;
  /** What the place held before (empty for a new text): a line or a secret already there is not new. */
  before: string;
  after: string;
}

export interface ModelOutput {
  /** What wrote the texts, for refusals: "the plan", "the compressed synthesis", "the summary". */
  subject: string;
  /** The nonce of the prompt the texts answer. */
  nonce: string;
  texts: readonly ModelText[];
  /** What may vouch for a directive: the notes the model was given, or the texts it rewrote. */
  sources: readonly WindowNote[];
  redact: RedactMode;
}

/** The texts' `after`, echoed fence lines dropped, once every guard passed; throws `invalid_input` when one refuses. */
export function guardModelOutput(output: ModelOutput): string[] {
  const texts = output.texts.map((text) => ({ ...text, after: stripFenceEcho(text.after, output.nonce) }));
  if (output.redact !== 'off') refuseNewSecrets(texts, output.subject);
  screenDirectives({
    subject: output.subject,
    files: texts.map(({ where, before, after }) => ({ filename: where, before, after })),
    notes: output.sources,
  });
  return texts.map((text) => text.after);
}
