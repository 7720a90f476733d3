/**
 * The one form of line endings live-mem stores text in: `\n`, no byte-order mark. A Windows file
 * (`\r\n`), an old Mac one (`\r`), an editor's BOM or a model's reply may bring others; Markdown's
 * lexer reads them all as `\n`, so offsets taken on the text as stored would not match it (a wedged
 * space: every edit refused). Text is normalised where it enters (writes, imports, model replies),
 * and the Markdown section model normalises again whatever it is given (older stores). Idempotent.
 */
export const normalizeLineEndings = (text: string): string => (hasForeignLineEndings(text) ? text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n') : text);

/** Whether `text` holds a `\r` or starts with a byte-order mark: what normalizeLineEndings changes. */
export const hasForeignLineEndings = (text: string): boolean => text.charCodeAt(0) === 0xfeff || text.includes('\r');
