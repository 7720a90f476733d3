/**
 * The patterns the items of a text are found by (items.ts reads them in its order of precedence), and
 * the word lists that decide around them: capitalised words that name nobody, words after a number
 * that say nothing of what it counts, the marks skipped when looking for a sentence's start. Data
 * only. The expressions of PATTERNS are global and shared: whoever runs one with `exec` first resets
 * its `lastIndex` (items.ts Reader.scan does).
 */

const FILE_EXTENSIONS =
  'ts|tsx|js|mjs|cjs|jsx|json|jsonl|md|mdx|yaml|yml|toml|ini|cfg|conf|env|lock|py|pyi|ipynb|rb|go|rs|java|kt|kts|scala|swift|c|h|cc|cpp|hpp|cs|fs|php|pl|lua|r|sh|bash|zsh|fish|ps1|bat|sql|html|htm|css|scss|less|xml|csv|tsv|txt|log|pdf|png|jpe?g|gif|svg|webp|ico|docx?|xlsx?|pptx?|zip|tar|gz|tgz|bz2|xz|7z|wasm|so|dll|dylib|exe|bin|tf|tfvars|proto|graphql|gql|vue|svelte|dockerfile|gradle|pem|crt|key|pub';

/** What follows the stem of a negation: "won" in "won't". */
export const NEGATION = /^['’]t(?![\p{L}])/u;

export const PATTERNS = {
  inlineCode: /`([^`\n]{1,200})`/g,
  url: /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`]+|\bwww\.[^\s<>"'`]+/gi,
  email: /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g,
  absolutePath: /(?<![\p{L}\p{N}_./~@-])(?:~|\.{1,2})?\/(?:[\w.@%+~-]+\/)*[\w.@%+~-]+\/?/gu,
  relativePath: /(?<![\p{L}\p{N}_./~@:-])[\w.@-]+(?:\/[\w.@-]+)+\/?/gu,
  windowsPath: /\b[A-Za-z]:\\(?:[^\\\s]+\\)*[^\\\s]*/g,
  fileName: new RegExp(`(?<![\\p{L}\\p{N}_./-])[\\w-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXTENSIONS})(?![\\p{L}\\p{N}_])`, 'giu'),
  ip: /(?<![\p{N}.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\p{N}.])/gu,
  version: /(?<![\p{L}\p{N}_.-])v\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)?(?![\p{N}_])|(?<![\p{L}\p{N}_.])\d+\.\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?(?![\p{N}_])/gu,
  flag: /(?<=^|[\s([`'"=])--?[A-Za-z][A-Za-z0-9_-]*(?:=[^\s,;)'"`]+)?/gm,
  uuid: /(?<![\p{L}\p{N}_-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\p{L}\p{N}_-])/giu,
  hash: /(?<![\p{L}\p{N}_-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}(?![\p{L}\p{N}_-])/gu,
  /** A number, then a unit or a scale, attached, after a space or a hyphen; or a currency sign, then a number. */
  numberWithUnit:
    /(?<![\p{L}\p{N}_.,])(\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)(?:(\s?-?)([A-Za-zµμ°%€$£¥×][A-Za-z°/]*))(?![\p{L}\p{N}_])|([$€£¥])\s?(\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)(?![\p{N}])/gu,
  call: /(?<![\p{L}\p{N}_$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(\)?/gu,
  dotted: /(?<![\p{L}\p{N}_$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?![\p{L}\p{N}_$])/gu,
  snake: /(?<![\p{L}\p{N}_$])(?:[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*_\w+|_{1,2}[A-Za-z]\w*)/gu,
  camel: /(?<![\p{L}\p{N}_])[a-z]+[A-Z][A-Za-z0-9]*(?![\p{L}\p{N}_])/gu,
  hyphenated: /(?<![\p{L}\p{N}_-])[\p{L}\p{N}_]+(?:-[\p{L}\p{N}_]+)+(?![\p{L}\p{N}_-])/gu,
  alphanumeric: /(?<![\p{L}\p{N}_])(?:[A-Za-z]+\d[A-Za-z0-9]*|\d+[A-Za-z][A-Za-z0-9]*)(?![\p{L}\p{N}_])/gu,
  bareNumber: /(?<![\p{L}\p{N}_.,])(\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)(?![\p{L}\p{N}_]|[.,]\d)/gu,
  name: /(?<![\p{L}\p{N}_'-])\p{Lu}[\p{L}\p{M}]*(?:-\p{Lu}[\p{L}\p{M}]*)*(?![\p{L}\p{N}_])/gu,
  word: /[\p{L}\p{M}]{3,}/gu,
};

/** Words written with a capital that name nobody: interjections, abbreviations, markers. */
export const NOT_NAMES = new Set(
  'ok okay hey hi hello thanks thank yes no yeah yep nope wow oh ah todo fixme note nb ps fyi asap tbd etc am pm id mr mrs ms dr st vs re cc bcc eta eod faq tl dr'.split(
    ' ',
  ),
);

/** Words after a number that say nothing of what it counts. */
export const FUNCTION_WORDS = new Set(
  'and or but the to of in on at for with from by is are was were be been per than as after before into over under about behind since until and then so if when while de du des le la les et ou en au aux pour par sur avec dans est sont'.split(
    ' ',
  ),
);

/** Characters skipped when looking back for the start of a sentence: quotes, brackets, list and emphasis marks. */
export const OPENERS = new Set([' ', '\t', '"', "'", '(', '[', '{', '*', '_', '>', '#', '-', '+', '•', '|', '`']);
