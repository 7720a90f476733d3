import type { Finding } from './secret-pattern.js';

/**
 * Private keys that span lines, which one regex cannot take whole in linear time: PEM blocks
 * (and OpenSSH, PGP, PKCS8, a GCP service account's JSON-escaped `private_key`) and the private
 * lines of a PuTTY `.ppk` file. Each is found by its markers, then cut in one pass.
 */

const KEY_BEGIN = /-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const KEY_END = /-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const BLANK_LINE = /\n[ \t\r]*\n/g;

/** Lowercase literals one of which each block holds: the scan in redact.ts looks for them with every pattern's. */
export const BLOCK_HINTS = { pem: 'private key', putty: 'private-lines:' } as const;

/**
 * `-----BEGIN … PRIVATE KEY-----` to its END line (in PEM, or in JSON with `\n` escapes as in a GCP
 * service-account key); without an END, to the next blank line or the end. Begins, ends and blank
 * lines are each found once, then paired in one pass.
 */
export function privateKeyBlocks(text: string, found: Finding[]): void {
  if (!text.includes('PRIVATE KEY')) return;
  const ends = [...text.matchAll(KEY_END)];
  const blanks = [...text.matchAll(BLANK_LINE)];
  let e = 0;
  let b = 0;
  let covered = 0;
  for (const begin of text.matchAll(KEY_BEGIN)) {
    if (begin.index < covered) continue;
    const after = begin.index + begin[0].length;
    while (e < ends.length && (ends[e] as RegExpExecArray).index < after) e++;
    while (b < blanks.length && (blanks[b] as RegExpExecArray).index < after) b++;
    const end = ends[e];
    const blank = blanks[b];
    covered = end ? end.index + end[0].length : blank ? blank.index : text.length;
    found.push({ start: begin.index, end: covered, kind: 'private-key', rank: -1 });
  }
}

const PUTTY_PRIVATE = /Private-Lines:[ \t]{0,8}([0-9]{1,3})[ \t]*\r?\n/gi;
const BASE64_LINE = /[A-Za-z0-9+/=]{1,256}\r?(?:\n|$)/y;

/**
 * A PuTTY key file's `Private-Lines: N` and the N base64 lines after it (the key itself; the
 * public lines and the MAC are no secret). Lines that stop being base64 end the block early.
 */
export function puttyPrivateLines(text: string, found: Finding[]): void {
  for (const header of text.matchAll(PUTTY_PRIVATE)) {
    const start = header.index + header[0].length;
    let end = start;
    for (let line = 0; line < Number(header[1]); line++) {
      BASE64_LINE.lastIndex = end;
      if (!BASE64_LINE.test(text)) break;
      end = BASE64_LINE.lastIndex;
    }
    // The last line's newline is kept: the mask stands on the lines it replaces.
    if (end > start) found.push({ start, end: text[end - 1] === '\n' ? end - (text[end - 2] === '\r' ? 2 : 1) : end, kind: 'private-key', rank: -1 });
  }
}
