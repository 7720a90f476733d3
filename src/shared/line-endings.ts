/**
 * The one form of line endings live-mem stores text in: `\n`, no byte-order mark. A Windows file
 * (`\r\n`), an old Mac one (`\r`), an editor's BOM or a model's reply may bring others, and so may
 * Unicode's own line ends — NEL (U+0085), LINE SEPARATOR (U+2028), PARAGRAPH SEPARATOR (U+2029) —
 * which JavaScript's regular expressions and Markdown's lexer read as line breaks where the section
 * model would not, wedging every later edit. Text is normalised where it enters (writes, imports,
 * model replies), and the Markdown section model normalises again whatever it is given (older
 * stores). Idempotent.
 */
const FOREIGN = /\r\n?|[\u0085\u2028\u2029]/g;

export const normalizeLineEndings = (text: string): string => (hasForeignLineEndings(text) ? text.replace(/^\uFEFF/, '').replace(FOREIGN, '\n') : text);

/** Whether `text` holds a `\r`, NEL, U+2028 or U+2029, or starts with a byte-order mark: what normalizeLineEndings changes. */
export const hasForeignLineEndings = (text: string): boolean => text.charCodeAt(0) === 0xfeff || /[\r\u0085\u2028\u2029]/.test(text);
