import { type Finding, isPlaceholder } from './secret-pattern.js';

/**
 * Values assigned to keys that name a secret, whatever the provider: `.env`, shell, YAML, JSON,
 * code, query strings (`DB_PASSWORD=…`, `client_secret: …`, `"apiKey": "…"`, `?token=…`) and XML
 * elements (`<password>…</password>`, as in Maven's settings.xml).
 */

/** The kind an assignment's key names, or undefined when it names no secret. */
export function assignmentKind(key: string): string | undefined {
  const lower = key.toLowerCase();
  const flat = lower.replace(/[^a-z0-9]/g, '');
  if (/aws.*secret(?:access)?key$/.test(flat) || flat === 'secretaccesskey') return 'aws-secret-key';
  if (/(?:password|passwd|passphrase)$/.test(flat) || /(?:^|[_.-])(?:pass|pwd)$/.test(lower)) return 'password';
  if (/(?:apikey|accesskey)$/.test(flat)) return 'api-key';
  // Rails' SECRET_KEY_BASE and RAILS_MASTER_KEY, a kubeconfig's client-key-data.
  if (/(?:secret|secretkey|secretkeybase|privatekey|signingkey|encryptionkey|masterkey|hmackey|keydata)$/.test(flat)) return 'secret';
  if (/token$/.test(flat)) return 'token';
  return undefined;
}

/** Every key assignment `assignmentKind` may accept contains one of these. */
export const ASSIGNMENT_HINTS = ['pass', 'pwd', 'secret', 'key', 'token'];

/**
 * Where a key naming a secret could stand in a text (case-insensitive): one of ASSIGNMENT_HINTS, its letters
 * perhaps split by the separators a key may hold (`api_k-ey` is `apikey` to assignmentKind), then the
 * rest of a key and its operator (`=`, `:`, `:=`, `=>`) or an XML element's `>`. Every key
 * assignmentKind accepts ends with a hint's letters (see its branches), so a text this does not match
 * holds no assignment and the scan of every key (ASSIGNMENT_KEY) is skipped: in prose, "the token
 * refresh path" names a hint but assigns nothing.
 */
const ASSIGNMENT_NEAR = new RegExp(`(?:${ASSIGNMENT_HINTS.map((hint) => [...hint].join('[_.:-]*')).join('|')})[a-z0-9_.:-]{0,63}["']?[ \\t]{0,8}[:=>]`, 'i');
export const mayHoldAssignment = (text: string): boolean => ASSIGNMENT_NEAR.test(text);

/**
 * `key = value`, `key: value`, `"key": "value"`, `key := value`, `'key' => 'value'`: the key part. A name
 * right after a colon is a path's or an ARN's (`arn:aws:…:secret:prod/db`), not a key.
 */
const ASSIGNMENT_KEY = /(?<![A-Za-z0-9_.:])(["']?)([A-Za-z][A-Za-z0-9_.-]{0,63})\1([ \t]{0,8})(:=|=>|=|:)(?!=)/g;
/** The value right after an assignment's operator: quoted, or a bare word. */
const ASSIGNMENT_VALUE = /([ \t]{0,8})(?:"([^"\n]{1,4096})"|'([^'\n]{1,4096})'|([^\s"'`,;)}\]]{3,256}))/y;
/** What may follow a bare value that ends its line: a comma or semicolon, a comment. */
const LINE_END = /[ \t]*[,;]?[ \t]*(?:(?:#|\/\/)[^\n]*)?(?:\r?\n|$)/y;
/** `max_token: 512`: a number in a config is a size or a count far more often than a secret. */
const COUNT = /^\d{1,9}$/;
const PWD_KEY = /(?:^|[_.-])pwd$/i;
/** `req.headers.token`, `extra._meta?.progressToken`: code, not a value. */
const CODE_REFERENCE = /^[A-Za-z_$][\w$]*(?:[?!]?\.[A-Za-z_$][\w$]*)+$/;
/** A bare name then `,` or `;` (`secret: secretFlag,`): a variable in code; YAML and .env values end their line bare. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** `<password>…</password>`: the element's name is the key. */
const XML_ELEMENT = /<([A-Za-z][A-Za-z0-9_.:-]{0,63})>([^<\n]{1,4096})<\/\1>/g;

/**
 * A quoted value, or a bare one after a tight `=` (.env, shell, query strings), is masked; a bare
 * value after `:` or a spaced `=` only when it ends its line (YAML, config): "password: reset it
 * monthly" is prose and is left alone. References, placeholders and counts (`${X}`, `<token>`,
 * `process.env.X`, `a.b.c`, `512`) are no secrets. `rank` names the findings where they overlap.
 */
export function assignments(text: string, found: Finding[], rank: number): void {
  for (const match of text.matchAll(ASSIGNMENT_KEY)) {
    const kind = assignmentKind(match[2] as string);
    if (!kind) continue;
    ASSIGNMENT_VALUE.lastIndex = match.index + match[0].length;
    const value = ASSIGNMENT_VALUE.exec(text);
    if (!value) continue;
    const bare = value[4] !== undefined;
    const tight = match[4] === '=' && match[3] === '' && value[1] === '';
    // In a query string (`?token=x&page=2`) a tight value ends at `&`; elsewhere `&` is a password's.
    const secret = bare && tight ? (value[4] as string).split('&')[0] : ((value[2] ?? value[3] ?? value[4]) as string);
    if (!secret || isPlaceholder(secret.trim())) continue;
    // `PWD=` is ODBC's password, but also the shell's working directory (`PWD=/home/bob`, `pwd: /srv`).
    if (PWD_KEY.test(match[2] as string) && (match[4] !== '=' || /^(?:[/~]|[A-Za-z]:\\)/.test(secret))) continue;
    if (bare && !tight) {
      LINE_END.lastIndex = ASSIGNMENT_VALUE.lastIndex;
      if (!LINE_END.test(text) || CODE_REFERENCE.test(secret) || COUNT.test(secret)) continue;
      if (IDENTIFIER.test(secret) && /[,;]/.test(text[ASSIGNMENT_VALUE.lastIndex] ?? '')) continue;
    }
    const start = match.index + match[0].length + (value[1] as string).length + (bare ? 0 : 1);
    found.push({ start, end: start + secret.length, kind, rank });
  }
  if (!text.includes('</')) return;
  for (const element of text.matchAll(XML_ELEMENT)) {
    const kind = assignmentKind(element[1] as string);
    const secret = element[2] as string;
    if (!kind || isPlaceholder(secret.trim())) continue;
    const start = element.index + (element[1] as string).length + 2;
    found.push({ start, end: start + secret.length, kind, rank });
  }
}
