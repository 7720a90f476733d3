/**
 * The secrets live-mem masks, one entry per kind (the table in docs and README). Each regex is
 * written to run in time linear in the text:
 * - no nested quantifiers, and every open-ended run is one character class;
 * - a token starts only where the character before it cannot belong to it (a lookbehind of its own
 *   class), so a long run is entered once, not once per character;
 * - the other repetitions are bounded ({1,256}), so a failed attempt costs a constant.
 * A pattern runs only when the lowercased text contains one of its `hints` (the cheap pre-check).
 * Private key blocks and `key = value` assignments need more than one regex: see redact.ts.
 */
export interface SecretPattern {
  kind: string;
  /** Global, with the `d` flag; the named group `s` is the secret when present, else the whole match. */
  regex: RegExp;
  /** Lowercase literals, one of which every match contains. */
  hints: string[];
  /** Rejects a match that only looks like the kind (e.g. a slug with no digit). */
  valid?: (secret: string) => boolean;
}

/** Random tokens mix letters and digits; words and slugs rarely do both. */
const mixed = (secret: string): boolean => /[0-9]/.test(secret) && /[A-Za-z]/.test(secret);

/** Values that stand for a secret without being one: `${DB_PASSWORD}`, `<token>`, `****`, `[redacted: …]`. */
export function isPlaceholder(value: string): boolean {
  return (
    /^[$<{%[*]/.test(value) ||
    /^(?:x+|\.{3}|…|null|none|nil|true|false|undefined|empty|required|optional|string|your[-_a-z]*)$/i.test(value) ||
    /(?:process\.env|os\.environ|getenv|\()/.test(value)
  );
}

/** In priority order: where two kinds cover the same text, the first one names it. */
export const SECRET_PATTERNS: SecretPattern[] = [
  {
    kind: 'aws-access-key-id',
    regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/dg,
    hints: ['akia', 'asia', 'abia', 'acca'],
  },
  {
    kind: 'azure-storage-key',
    regex: /(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey)=(?<s>[A-Za-z0-9+/]{20,256}={0,2})/dgi,
    hints: ['accountkey=', 'sharedaccesskey='],
  },
  {
    kind: 'azure-sas-signature',
    regex: /[?&;]sig=(?<s>[A-Za-z0-9%+/=]{20,256})/dg,
    hints: ['sig='],
  },
  {
    kind: 'github-token',
    regex: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/dg,
    hints: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
  },
  {
    kind: 'gitlab-token',
    regex: /(?<![A-Za-z0-9_-])(?:glpat|glrt|gldt)-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/dg,
    hints: ['glpat-', 'glrt-', 'gldt-'],
  },
  {
    kind: 'anthropic-api-key',
    regex: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/dg,
    hints: ['sk-ant-'],
  },
  {
    kind: 'openai-api-key',
    regex: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/dg,
    hints: ['sk-'],
    valid: mixed,
  },
  {
    kind: 'google-api-key',
    regex: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/dg,
    hints: ['aiza'],
  },
  {
    kind: 'stripe-key',
    regex: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}(?![A-Za-z0-9_])/dg,
    hints: ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_'],
  },
  {
    kind: 'slack-token',
    regex: /(?<![A-Za-z0-9_-])xox[abposre]-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9_-])/dg,
    hints: ['xox'],
    valid: mixed,
  },
  {
    kind: 'slack-webhook',
    regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]{20,255}/dg,
    hints: ['hooks.slack.com'],
  },
  {
    kind: 'huggingface-token',
    regex: /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,255}(?![A-Za-z0-9_])/dg,
    hints: ['hf_'],
    valid: (secret) => /[A-Z]/.test(secret) && /[a-z]/.test(secret.slice(3)),
  },
  {
    kind: 'npm-token',
    regex: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg,
    hints: ['npm_'],
    valid: mixed,
  },
  {
    kind: 'live-mem-token',
    regex: /(?<![A-Za-z0-9_-])lm_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg,
    hints: ['lm_'],
  },
  {
    kind: 'jwt',
    regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/dg,
    hints: ['eyj'],
  },
  {
    kind: 'bearer-token',
    regex: /(?<![A-Za-z0-9])[Bb]earer[ \t]{1,4}(?<s>[A-Za-z0-9._~+/-]{20,4096}=*)/dg,
    hints: ['bearer'],
    valid: mixed,
  },
  {
    kind: 'url-password',
    regex: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/[^\s:/?#@]{1,256}:(?<s>[^\s/?#@]{1,256})@/dg,
    hints: ['://'],
    valid: (secret) => !isPlaceholder(secret) && !/^(?:password|passwd|pass|pwd|secret)$/i.test(secret),
  },
];

/** The kind an assignment's key names, or undefined when it names no secret (redact.ts). */
export function assignmentKind(key: string): string | undefined {
  const lower = key.toLowerCase();
  const flat = lower.replace(/[^a-z0-9]/g, '');
  if (/aws.*secret(?:access)?key$/.test(flat) || flat === 'secretaccesskey') return 'aws-secret-key';
  if (/(?:password|passwd|passphrase)$/.test(flat) || /(?:^|[_.-])pass$/.test(lower)) return 'password';
  if (/(?:apikey|accesskey)$/.test(flat)) return 'api-key';
  if (/(?:secret|secretkey|privatekey|signingkey|encryptionkey)$/.test(flat)) return 'secret';
  if (/token$/.test(flat)) return 'token';
  return undefined;
}

/** Every key assignment `assignmentKind` may accept contains one of these. */
export const ASSIGNMENT_HINTS = ['pass', 'secret', 'key', 'token'];
