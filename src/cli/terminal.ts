/**
 * Text from the store (notes, tags, descriptions, bank files, file names, a model's messages) is
 * written by agents and an LLM: untrusted. Printed raw, an escape sequence in it could retitle the
 * terminal (OSC 0), write the clipboard (OSC 52), clear the screen (CSI 2J) or, as a bidi override,
 * show text other than what is there. Everything the CLI renders for people goes through this
 * function, which makes such characters visible instead: C0 controls as their Control Pictures
 * (ESC → ␛, BEL → ␇, CR → ␍), DEL as ␡, C1 controls and bidi controls as `\uXXXX`. Newlines and
 * tabs are kept, and so is a CRLF line end (as a newline). `--json` does not use it: JSON escapes
 * control characters itself, and a script gets the exact text.
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
