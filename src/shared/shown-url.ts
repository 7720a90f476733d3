/**
 * A URL as live-mem may show it (a log line, an error, a command's output): without the user and
 * password of its authority (`https://user:secret@host/`) and with the values of query parameters
 * that name a credential (`?private_token=…`, `?api_key=…`) masked. What a person typed may carry a
 * secret; what is shown goes to terminals, logs and an agent's context.
 */

/** Query parameter names that carry a credential, by what they contain: masked when shown. */
const CREDENTIAL_NAME = /token|secret|passw|pwd|auth|key|sig|credential|session/i;
const MASK = '***';

export function shownUrl(raw: string | URL): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return shownText(String(raw));
  }
  if (url.username !== '' || url.password !== '') {
    url.username = '';
    url.password = '';
  }
  for (const name of new Set(url.searchParams.keys())) if (CREDENTIAL_NAME.test(name)) url.searchParams.set(name, MASK);
  return url.href;
}

/** Whether a URL carries a user or a password in its authority. */
export function hasUserInfo(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/** What does not parse as a URL, cleaned the same way as text: everything up to the authority's last `@`, and credential parameters. */
function shownText(text: string): string {
  return text
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/, '$1')
    .replace(/([?&;]([^=&#\s]*)=)([^&#\s]*)/g, (whole, head: string, name: string) => (CREDENTIAL_NAME.test(name) ? `${head}${MASK}` : whole));
}
