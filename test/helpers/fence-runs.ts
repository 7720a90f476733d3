/**
 * What a reader of a prompt could take for a fence's `<<<`, found independently of
 * src/core/prompt-fence.ts (a check that used the code's own table would miss what the code misses):
 * the look-alikes a red team tried and Unicode lists, how many `<` each reads as, and every
 * character that is invisible by Unicode property.
 */

/** Each look-alike of `<`, and how many it reads as. */
export const LOOKALIKES: ReadonlyArray<[string, number]> = [
  ['<', 1],
  ['\uFF1C', 1], // ＜ fullwidth
  ['\uFE64', 1], // ﹤ small
  ['\u226E', 1], // ≮ (NFKD: < and a combining solidus)
  ['\u2039', 1], // ‹ single left-pointing angle quotation mark
  ['\u276E', 1], // ❮ heavy left-pointing angle quotation mark ornament
  ['\u02C2', 1], // ˂ modifier letter left arrowhead
  ['\u1438', 1], // ᐸ Canadian syllabics pa
  ['\u16B2', 1], // ᚲ runic kauna
  ['\u{1D236}', 1], // 𝈶 Greek instrumental notation symbol-40
  ['\u3008', 1], // 〈
  ['\u2329', 1], // 〈
  ['\u27E8', 1], // ⟨
  ['\u276C', 1], // ❬
  ['\u29FC', 1], // ⧼
  ['\u226A', 2], // ≪
  ['\u00AB', 2], // «
  ['\u300A', 2], // 《
  ['\u27EA', 2], // ⟪
  ['\u2AA1', 2], // ⪡
  ['\u22D8', 3], // ⋘
  ['\u2AF7', 3], // ⫷
];

/** Invisible characters that could sit between them: format (bidi controls, U+180E), default-ignorable, combining, control. */
export const INVISIBLE = [
  '\u180E',
  '\u200B',
  '\u200D',
  '\u2060',
  '\uFEFF',
  '\u00AD',
  '\u202E',
  '\u2066',
  '\u061C',
  '\u034F',
  '\uFE0F',
  '\u0301',
  '\u115F',
  '\u3164',
  '\u0001',
];

const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Mn}\p{Me}\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/gu;
const WEIGHT = new Map(LOOKALIKES);

/** `text` as a reader takes it: invisible characters gone, each look-alike written as the `<` it reads as. */
export function asRead(text: string): string {
  return [...text.replace(HIDDEN, '')].map((ch) => '<'.repeat(WEIGHT.get(ch) ?? (ch.normalize('NFKD').includes('<') ? 1 : 0)) || ch).join('');
}

/** The fence-like runs (three `<` or more, as read) of `text`, but its real fence lines (those of `nonce`). */
export function unescapedRuns(text: string, nonce?: string): string[] {
  const data = nonce ? text.replace(new RegExp(`^<<<[^\\n]* nonce=${nonce}>>>$`, 'gm'), '') : text;
  return [...asRead(data).matchAll(/.{0,20}<<<.{0,20}/g)].map((match) => match[0]);
}

/** Each look-alike of `>`, which ends a fence line, and how many it reads as: the mirror images of the above. */
export const CLOSING_LOOKALIKES: ReadonlyArray<[string, number]> = [
  ['>', 1],
  ['\uFF1E', 1], // ＞ fullwidth
  ['\uFE65', 1], // ﹥ small
  ['\u226F', 1], // ≯ (NFKD: > and a combining solidus)
  ['\u203A', 1], // › single right-pointing angle quotation mark
  ['\u276F', 1], // ❯
  ['\u02C3', 1], // ˃ modifier letter right arrowhead
  ['\u1433', 1], // ᐳ Canadian syllabics po
  ['\u{16F3F}', 1], // 𖼿 Miao letter archaic zza (a confusable of >)
  ['\u{1D237}', 1], // 𝈷 Greek instrumental notation symbol-42
  ['\u3009', 1], // 〉
  ['\u232A', 1], // 〉
  ['\u27E9', 1], // ⟩
  ['\u276D', 1], // ❭
  ['\u29FD', 1], // ⧽
  ['\u226B', 2], // ≫
  ['\u00BB', 2], // »
  ['\u300B', 2], // 》
  ['\u27EB', 2], // ⟫
  ['\u2AA2', 2], // ⪢
  ['\u22D9', 3], // ⋙
  ['\u2AF8', 3], // ⫸
];
const CLOSING_WEIGHT = new Map(CLOSING_LOOKALIKES);

/** The runs of `text` that read as `>>>` (invisible characters gone, each look-alike as the `>` it reads as). */
export function closingRuns(text: string): string[] {
  const read = [...text.replace(HIDDEN, '')].map((ch) => '>'.repeat(CLOSING_WEIGHT.get(ch) ?? (ch.normalize('NFKD').includes('>') ? 1 : 0)) || ch).join('');
  return [...read.matchAll(/.{0,20}>>>.{0,20}/g)].map((match) => match[0]);
}
