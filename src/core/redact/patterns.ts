import { PROVIDER_PATTERNS } from './providers.js';
import { credentialLike, encodesUserPassword, isPlaceholder, mixed, type SecretPattern } from './secret-pattern.js';

export { isPlaceholder, type SecretPattern } from './secret-pattern.js';

/** `X-API-Key: …`, `PRIVATE-TOKEN: …`: a header (hyphenated words, no space before the colon) whose last word is one of `names`. */
function headerRow(kind: string, names: string, hints: string[]): SecretPattern {
  return {
    kind,
    regex: new RegExp(
      `(?<![A-Za-z0-9_-])(?:[A-Za-z0-9-]{0,60}-)?(?:${names}):[ \\t]{0,4}(?<s>[A-Za-z0-9._~+/=:-]{8,4096})(?=[ \\t]{0,4}(?:["'\\r\\n]|$))`,
      'dgi',
    ),
    hints,
    valid: (secret) => mixed(secret) && !isPlaceholder(secret),
  };
}

/**
 * A random 40-character key mixes both cases and digits; a path (`s3/command/GetObjectCommand/…`) has its words
 * between slashes, where a key has fewer than three slashes nineteen times in twenty.
 */
const bareAwsSecret = (secret: string): boolean =>
  /[A-Z]/.test(secret) && /[a-z]/.test(secret) && /[0-9]/.test(secret) && (secret.match(/\//g) ?? []).length < 3 && !/^\/|\/$/.test(secret);

/**
 * The secrets live-mem masks (the table in docs/control.md): the providers' own formats
 * (providers.ts), then the generic shapes below — tokens in HTTP headers, passwords on command
 * lines and in connection URLs, a registry's `auth`. Private key blocks and `key = value`
 * assignments need more than one regex: see blocks.ts and assignments.ts. Every regex follows the
 * linear-time rules of secret-pattern.ts.
 */
const GENERIC_PATTERNS: SecretPattern[] = [
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
    valid: encodesUserPassword,
  },
  {
    kind: 'basic-auth',
    // A Docker or Podman config.json: `"auth": "<base64 of user:password>"`.
    regex: /"auth"[ \t]{0,4}:[ \t]{0,4}"(?<s>[A-Za-z0-9+/]{4,4096}={0,2})"/dg,
    hints: ['"auth"'],
    valid: encodesUserPassword,
  },
  {
    kind: 'bearer-token',
    regex: /(?<![A-Za-z0-9])[Bb]earer[ \t]{1,4}(?<s>[A-Za-z0-9._~+/-]{20,4096}=*)/dg,
    hints: ['bearer'],
    valid: mixed,
  },
  {
    kind: 'auth-header',
    // `Authorization: Token …`, `Bot …`, `SSWS …`, `Splunk …`, or a bare credential; Basic and Bearer have their own rows.
    regex:
      /(?<![A-Za-z0-9_-])(?:Proxy-)?Authorization["']?[ \t]{0,4}[:=][ \t]{0,4}["']?(?:(?!(?:Basic|Bearer|Digest)[ \t])[A-Za-z][A-Za-z0-9-]{1,30}[ \t]{1,4})?(?<s>[A-Za-z0-9._~+/=:-]{8,4096})/dgi,
    hints: ['authorization'],
    valid: (secret) => mixed(secret) && !isPlaceholder(secret),
  },
  // A header naming a secret, as curl sends it (`-H "X-API-Key: …"`) or a request dump shows it: the value ends the
  // line or the quotes. Named as an assignment of the same name would be (assignments.ts), which catches the rest.
  headerRow('api-key', 'api-?key|key', ['key:']),
  headerRow('token', 'token|auth', ['token:', 'auth:']),
  headerRow('secret', 'secret|signature', ['secret:', 'signature:']),
  headerRow('password', 'password', ['password:']),
  {
    kind: 'npmrc-auth',
    // `.npmrc`: `//registry.example.com/:_authToken=…`, `_auth=…`, `_password=…`.
    regex: /(?<![A-Za-z0-9])_(?:authToken|auth|password)[ \t]{0,4}=[ \t]{0,4}(?<s>[^\s"'`,;]{1,4096})/dg,
    hints: ['_auth', '_password'],
    valid: (secret) => !isPlaceholder(secret),
  },
  // A secret access key in prose, without its key id: 40 characters of base64 mixing cases and digits, standing alone
  // (after a space, a quote, `=` or `:`), with "aws" or "secret" shortly before or after it.
  {
    kind: 'aws-secret-key',
    regex: /(?:aws|secret)[^\n]{0,80}?(?<=[\s"'=:,(])(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
    hints: ['aws', 'secret'],
    valid: bareAwsSecret,
  },
  {
    kind: 'aws-secret-key',
    regex: /(?<=^|[\s"'=:,(])(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])[^\n]{0,40}?(?:aws|secret)/dgi,
    hints: ['aws', 'secret'],
    valid: bareAwsSecret,
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
    // `sshpass -p SECRET`, `docker login -p SECRET` (and podman, buildah, skopeo, helm registry, oras, nerdctl). `--password=` is an assignment.
    regex:
      /(?<![A-Za-z0-9_-])(?:(?:mysql|mariadb)[a-z-]{0,12}[ \t][^\n]{0,200}?(?<=[ \t])-p|redis-cli[ \t][^\n]{0,200}?(?<=[ \t])-a[ \t]{1,4}|sshpass[ \t][^\n]{0,100}?(?<=[ \t])-p[ \t]{0,4}|(?:docker|podman|buildah|skopeo|helm[ \t]{1,4}registry|oras|nerdctl)[ \t]{1,4}login[ \t][^\n]{0,200}?(?<=[ \t])(?:-p|--password)[ \t]{1,4})(?<s>'[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"`]{1,256})/dg,
    hints: ['mysql', 'mariadb', 'redis-cli', 'sshpass', 'login'],
    valid: (secret) => !isPlaceholder(secret.replace(/^['"]|['"]$/g, '')),
  },
  {
    kind: 'password',
    // `mongosh -p SECRET`, `sqlcmd -P SECRET`, `ldapsearch -w SECRET` (a bare `-p`/`-w` there prompts or is no flag at all).
    regex:
      /(?<![A-Za-z0-9_-])(?:mongo(?:sh|dump|restore|import|export)?[ \t][^\n]{0,200}?(?<=[ \t])-p|sqlcmd[ \t][^\n]{0,200}?(?<=[ \t])-P|ldap[a-z]{3,10}[ \t][^\n]{0,200}?(?<=[ \t])-w)[ \t]{1,4}(?<s>'[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"`-][^\s'"`]{0,255})/dg,
    hints: ['mongo', 'sqlcmd', 'ldap'],
    valid: (secret) => !isPlaceholder(secret.replace(/^['"]|['"]$/g, '')),
  },
  {
    kind: 'password',
    // A flag naming a secret, then its value after a space: `psql --password X`, `--token X`, `--client-secret X`, `--api-key X`.
    regex:
      /(?<![A-Za-z0-9_-])--(?:[a-z0-9-]{0,40}-)?(?:password|passwd|pass|token|secret|api-key|apikey|access-key|secret-key|private-key)[ \t]{1,4}(?<s>'[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"`-][^\s'"`]{0,255})/dg,
    hints: ['--'],
    valid: (secret) => credentialLike(secret.replace(/^['"]|['"]$/g, '')),
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
    // NuGet.config: `<add key="ClearTextPassword" value="SECRET" />`.
    regex: /<add[ \t]{1,4}key="(?:ClearText)?Password"[ \t]{1,4}value="(?<s>[^"\n]{1,256})"/dgi,
    hints: ['password"'],
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

/** In priority order: where two kinds cover the same text, the first one names it (a provider's format before any generic shape). */
export const SECRET_PATTERNS: SecretPattern[] = [...PROVIDER_PATTERNS, ...GENERIC_PATTERNS];
