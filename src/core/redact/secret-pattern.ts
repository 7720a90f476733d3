/**
 * What a secret pattern is, and the small judgements rows share. Each regex is written to run in
 * time linear in the text:
 * - no nested quantifiers, and every open-ended run is one character class;
 * - a token starts only where the character before it cannot belong to it (a lookbehind of its own
 *   class), so a long run is entered once, not once per character;
 * - the other repetitions are bounded ({1,256}), so a failed attempt costs a constant.
 * A pattern runs only when the lowercased text contains one of its `hints` (redact.ts finds them
 * all in one scan).
 */
export interface SecretPattern {
  /** Who issues the secret ("Stripe", "GitLab"); absent for generic shapes (headers, flags, URLs). */
  provider?: string;
  /** What a mask says: `[redacted: kind]`. */
  kind: string;
  /** Global, with the `d` flag; the named group `s` is the secret when present, else the whole match. */
  regex: RegExp;
  /**
   * Lowercase literals, one of which every match contains (as gitleaks' `keywords`): the row runs only
   * on a text holding one (redact.ts, scansFor). A token with no prefix of its own is keyed on a word
   * the text must hold beside it instead (Discord's bot token: "discord"); test/core/redact-prefilter.test.ts
   * checks both against every sample.
   */
  hints: string[];
  /** Rejects a match that only looks like the kind (e.g. a slug with no digit). */
  valid?: (secret: string) => boolean;
}

/** A secret found in a text: where it is, its kind, and the rank that names it where findings overlap (lower wins). */
export interface Finding {
  start: number;
  end: number;
  kind: string;
  rank: number;
}

/** Random tokens mix letters and digits; words and slugs rarely do both. */
export const mixed = (secret: string): boolean => /[0-9]/.test(secret) && /[A-Za-z]/.test(secret);

/** Values that stand for a secret without being one: `${DB_PASSWORD}`, `<token>`, `****`, `[redacted: …]`, `sk-…`. */
export function isPlaceholder(value: string): boolean {
  return (
    /^[$<{%[*]/.test(value) ||
    /^(?:x+|\.{3}|…|null|none|nil|true|false|undefined|empty|required|optional|string|boolean|number|your[-_a-z]*)$/i.test(value) ||
    /(?:process\.env|os\.environ|getenv|\(|…|\.\.\.)/.test(value)
  );
}

/**
 * A value given on a command line or in a header that looks like a credential rather than a word:
 * a digit or a symbol in it, or a capital past its first letter ("the --password flag" is prose).
 */
export function credentialLike(value: string): boolean {
  // A sentence's punctuation after a word ("the --token works, and…") is no symbol of the value's.
  const word = value.replace(/[.,;:!?)]+$/, '');
  return !isPlaceholder(word) && word.length >= 4 && (/[0-9]/.test(word) || /[^A-Za-z0-9_./-]/.test(word) || /^.[^A-Z]*[A-Z]/.test(word));
}

/** `user:password` in base64 (HTTP Basic, a Docker config's `auth`): only what decodes to printable text with a colon. */
export const encodesUserPassword = (secret: string): boolean =>
  /^[\x20-\x7e]{0,1000}:[\x20-\x7e]{1,1000}$/.test(Buffer.from(secret, 'base64').toString('latin1'));
