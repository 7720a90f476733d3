/**
 * The secrets live-mem masks, one entry per kind (the table in docs/control.md). Each regex is
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
    kind: 'aws-secret-key',
    // The secret right after its key id, as the console's credentials CSV (`bob,,AKIA…,SECRET,https://…`) lays them out.
    regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}[ \t]{0,4}[,;|\t][ \t]{0,4}(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dg,
    hints: ['akia', 'asia'],
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
    regex: /(?<![A-Za-z0-9_-])(?:glpat|glrt|gldt|glptt|glft|glsoat|glcbt|glimt|gloas|glagent)-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/dg,
    hints: ['glpat-', 'glrt-', 'gldt-', 'glptt-', 'glft-', 'glsoat-', 'glcbt-', 'glimt-', 'gloas-', 'glagent-'],
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
    regex: /(?<![A-Za-z0-9_-])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9_-])/dg,
    hints: ['xox', 'xapp-'],
    valid: mixed,
  },
  {
    kind: 'slack-webhook',
    regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]{20,255}/dg,
    hints: ['hooks.slack.com'],
  },
  {
    kind: 'discord-webhook',
    regex: /https:\/\/(?:(?:canary|ptb)\.)?discord(?:app)?\.com\/api\/webhooks\/[0-9]{5,30}\/[A-Za-z0-9_-]{20,255}/dg,
    hints: ['discord'],
  },
  {
    kind: 'pypi-token',
    regex: /(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,4096}(?![A-Za-z0-9_-])/dg,
    hints: ['pypi-age'],
  },
  {
    kind: 'sendgrid-key',
    regex: /(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg,
    hints: ['sg.'],
  },
  {
    kind: 'digitalocean-token',
    regex: /(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])/dg,
    hints: ['_v1_'],
  },
  {
    kind: 'shopify-token',
    regex: /(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9_])/dg,
    hints: ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
  },
  {
    kind: 'google-oauth-token',
    regex: /(?<![A-Za-z0-9_-])ya29\.[A-Za-z0-9_-]{20,4096}(?![A-Za-z0-9_-])/dg,
    hints: ['ya29.'],
    valid: mixed,
  },
  {
    kind: 'telegram-bot-token',
    regex: /(?<![A-Za-z0-9_:])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/dg,
    hints: [':aa'],
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
    kind: 'basic-auth',
    // `Authorization: Basic <base64 of user:password>`: only what decodes to printable `user:password`, so "Basic setup" stays.
    regex: /(?<![A-Za-z0-9])[Bb]asic[ \t]{1,4}(?<s>[A-Za-z0-9+/]{6,4096}={0,2})(?![A-Za-z0-9+/=])/dg,
    hints: ['basic'],
    valid: (secret) => /^[\x20-\x7e]{0,1000}:[\x20-\x7e]{1,1000}$/.test(Buffer.from(secret, 'base64').toString('latin1')),
  },
  {
    kind: 'bearer-token',
    regex: /(?<![A-Za-z0-9])[Bb]earer[ \t]{1,4}(?<s>[A-Za-z0-9._~+/-]{20,4096}=*)/dg,
    hints: ['bearer'],
    valid: mixed,
  },
  {
    kind: 'url-password',
    // The user may be empty: `redis://:PASSWORD@host` is Redis's own form.
    regex: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/[^\s:/?#@]{0,256}:(?<s>[^\s/?#@]{1,256})@/dg,
    hints: ['://'],
    valid: (secret) => !isPlaceholder(secret) && !/^(?:password|passwd|pass|pwd|secret)$/i.test(secret),
  },
  {
    kind: 'password',
    // Passwords given to a command: `mysql -pSECRET` (MySQL and MariaDB tools; `-p` alone prompts), `redis-cli -a SECRET`,
    // `sshpass -p SECRET`, `docker login -p SECRET`. `--password=` is an assignment (redact.ts).
    regex:
      /(?<![A-Za-z0-9_-])(?:(?:mysql|mariadb)[a-z-]{0,12}[ \t][^\n]{0,200}?(?<=[ \t])-p|redis-cli[ \t][^\n]{0,200}?(?<=[ \t])-a[ \t]{1,4}|sshpass[ \t][^\n]{0,100}?(?<=[ \t])-p[ \t]{0,4}|docker[ \t]{1,4}login[ \t][^\n]{0,200}?(?<=[ \t])(?:-p|--password)[ \t]{1,4})(?<s>'[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"]{1,256})/dg,
    hints: ['mysql', 'mariadb', 'redis-cli', 'sshpass', 'docker'],
    valid: (secret) => !isPlaceholder(secret.replace(/^['"]|['"]$/g, '')),
  },
  {
    kind: 'password',
    // `curl -u user:SECRET`, and OpenSSL's `-pass pass:SECRET` / `-passin pass:SECRET`.
    regex:
      /(?<![A-Za-z0-9_-])(?:curl[ \t][^\n]{0,200}?(?<=[ \t])(?:-u|--user)[ \t=]{1,4}['"]?[^\s:'"]{1,256}:|-pass(?:in|out)?[ \t]{1,4}pass:)(?<s>[^\s'"@]{1,256})/dg,
    hints: ['curl', 'pass:'],
    valid: (secret) => !isPlaceholder(secret),
  },
  {
    kind: 'password',
    // A .netrc entry on one line: `machine HOST login USER password SECRET`.
    regex: /(?<![A-Za-z0-9_-])machine[ \t]{1,8}[^\s]{1,256}[ \t]{1,8}login[ \t]{1,8}[^\s]{1,256}[ \t]{1,8}password[ \t]{1,8}(?<s>[^\s]{1,256})/dg,
    hints: ['machine'],
  },
  {
    kind: 'password',
    // A .netrc entry over lines: a line `login USER`, then a line `password SECRET`.
    regex: /(?<=^|\n)[ \t]{0,16}login[ \t]{1,8}[^\s]{1,256}[ \t]{0,8}\r?\n[ \t]{0,16}password[ \t]{1,8}(?<s>[^\s]{1,256})/dg,
    hints: ['login'],
  },
];

/** The kind an assignment's key names, or undefined when it names no secret (redact.ts). */
export function assignmentKind(key: string): string | undefined {
  const lower = key.toLowerCase();
  const flat = lower.replace(/[^a-z0-9]/g, '');
  if (/aws.*secret(?:access)?key$/.test(flat) || flat === 'secretaccesskey') return 'aws-secret-key';
  if (/(?:password|passwd|passphrase)$/.test(flat) || /(?:^|[_.-])(?:pass|pwd)$/.test(lower)) return 'password';
  if (/(?:apikey|accesskey)$/.test(flat)) return 'api-key';
  if (/(?:secret|secretkey|privatekey|signingkey|encryptionkey)$/.test(flat)) return 'secret';
  if (/token$/.test(flat)) return 'token';
  return undefined;
}

/** Every key assignment `assignmentKind` may accept contains one of these. */
export const ASSIGNMENT_HINTS = ['pass', 'pwd', 'secret', 'key', 'token'];
