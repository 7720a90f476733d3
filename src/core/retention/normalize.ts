/**
 * The one normal form the retention check compares texts in: what a note says and what the bank says
 * are both put through it, so a fact written `1,000`, "café" or ‘quoted’ on one side is the same fact
 * written `1000`, "cafe" or 'quoted' on the other. Pure, no state.
 */

const MARKS = /\p{M}/gu;
const LIGATURES: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss', ø: 'o', ł: 'l', đ: 'd', ı: 'i' };
const LIGATURE = /[œæßøłđı]/g;
/** Typographic look-alikes a model or an editor writes for the ASCII a note used (or the other way round). */
const TYPOGRAPHY: Array<[RegExp, string]> = [
  [/[\u2018\u2019\u201a\u201b\u02bc\u2032\u00b4]/g, "'"],
  [/[\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d]/g, '-'],
  [/[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g, ' '],
  [/[\u200b-\u200d\u2060\ufeff]/g, ''],
  [/\u2026/g, '...'],
];

/** Compatibility forms (NFKC: full-width letters, ligatures such as ﬁ), typography folded as above, line endings kept. */
export function plain(text: string): string {
  let out = text.normalize('NFKC');
  for (const [pattern, replacement] of TYPOGRAPHY) out = out.replace(pattern, replacement);
  return out;
}

/** `plain`, then lower case without diacritics: "Décision" → "decision". Offsets may move: never index the original with them. */
export function flatten(text: string): string {
  const lower = plain(text).toLowerCase();
  if (/^[\u0000-\u007f]*$/.test(lower)) return lower;
  return lower
    .normalize('NFD')
    .replace(MARKS, '')
    .replace(LIGATURE, (c) => LIGATURES[c] ?? c)
    .normalize('NFC');
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/**
 * Whether `needle` (flattened) occurs in `hay` (flattened) as a whole: the characters either side of
 * an occurrence are no letters, digits or underscores where the needle itself starts or ends with one
 * (`8443` is in "port 8443," but not in "84431"), and the text does not go on after it with a dot or
 * a hyphen and more of a word (`app.log` is not in "app.log.1", nor `v2.3` in "v2.3.1"; a sentence's
 * full stop is no continuation).
 */
export function containsWhole(hay: string, needle: string): boolean {
  if (needle === '') return false;
  const wordStart = WORD_CHAR.test(needle[0] as string);
  const wordEnd = WORD_CHAR.test(needle[needle.length - 1] as string);
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1)) {
    const before = at > 0 ? hay[at - 1] : undefined;
    const after = hay[at + needle.length];
    if (wordStart && before !== undefined && WORD_CHAR.test(before)) continue;
    if (wordEnd && after !== undefined && WORD_CHAR.test(after)) continue;
    const further = hay[at + needle.length + 1];
    if ((after === '.' || after === '-') && further !== undefined && WORD_CHAR.test(further)) continue;
    return true;
  }
  return false;
}
