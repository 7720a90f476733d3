/**
 * Text from the store (notes, tags, descriptions, bank files, file names, a model's messages) is
 * written by agents and an LLM: untrusted. Printed raw, an escape sequence in it could retitle the
 * terminal (OSC 0), write the clipboard (OSC 52), clear the screen (CSI 2J) or, as a bidi override,
 * show text other than what is there. Everything the CLI renders for people goes through
 * forTerminal, which makes such characters visible instead: C0 controls as their Control Pictures
 * (ESC → ␛, BEL → ␇, CR → ␍), DEL as ␡, C1 controls and bidi controls as `\uXXXX`. Newlines and
 * tabs are kept, and so is a CRLF line end (as a newline). `--json` goes through jsonForTerminal
 * instead: a script gets the exact text.
 */
const UNSAFE = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

export function forTerminal(text: string): string {
  return text.replace(UNSAFE, (char) => {
    if (char === '\r\n') return '\n';
    const code = char.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** What JSON.stringify leaves raw but a terminal showing the JSON may still obey: DEL, C1 and bidi controls. */
const UNESCAPED_BY_JSON = /[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/** `--json` output: the value as JSON, those characters written as `\uXXXX` escapes, which every JSON parser reads back as they were. */
export function jsonForTerminal(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(UNESCAPED_BY_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}
