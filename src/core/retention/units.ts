/**
 * Numbers as a note and a bank may each write them: `1,000`, `1 000`, `1.000` and `1000`; `1,5` and
 * `1.5`; `10k` and `10,000`; `2.5 million`; `30 s`, `30s`, `30-second` and `30 seconds`. A number is
 * compared by its value (the values it may stand for, when its separators are ambiguous) and by its
 * unit's canonical name; `three` on one side is `3` on the other. Pure tables and functions.
 */

/** Units, as written (exact case first, then lower case), to one canonical name per unit. */
const EXACT_UNITS: Record<string, string> = {
  B: 'B',
  KB: 'kB',
  kB: 'kB',
  KiB: 'kB',
  Ko: 'kB',
  MB: 'MB',
  MiB: 'MB',
  Mo: 'MB',
  GB: 'GB',
  GiB: 'GB',
  Go: 'GB',
  TB: 'TB',
  TiB: 'TB',
  To: 'TB',
  PB: 'PB',
  Mb: 'Mbit',
  Gb: 'Gbit',
  Kb: 'kbit',
};

const UNIT_GROUPS: Array<[string, string[]]> = [
  ['ns', ['ns', 'nanosecond', 'nanoseconds']],
  ['us', ['us', 'µs', 'μs', 'microsecond', 'microseconds']],
  ['ms', ['ms', 'msec', 'msecs', 'millisecond', 'milliseconds', 'milliseconde', 'millisecondes']],
  ['s', ['s', 'sec', 'secs', 'second', 'seconds', 'seconde', 'secondes']],
  ['min', ['min', 'mins', 'minute', 'minutes', 'mn']],
  ['h', ['h', 'hr', 'hrs', 'hour', 'hours', 'heure', 'heures']],
  ['d', ['d', 'day', 'days', 'jour', 'jours', 'j']],
  ['wk', ['wk', 'wks', 'week', 'weeks', 'semaine', 'semaines']],
  ['mo', ['mo', 'month', 'months', 'mois']],
  ['y', ['y', 'yr', 'yrs', 'year', 'years', 'an', 'ans', 'annee', 'annees', 'année', 'années']],
  ['bit', ['bit', 'bits']],
  ['B', ['byte', 'bytes', 'octet', 'octets']],
  ['kB', ['kb', 'kib', 'ko', 'kilobyte', 'kilobytes']],
  ['MB', ['mb', 'mib', 'mo', 'megabyte', 'megabytes']],
  ['GB', ['gb', 'gib', 'go', 'gigabyte', 'gigabytes']],
  ['TB', ['tb', 'tib', 'terabyte', 'terabytes']],
  ['kbit/s', ['kbps', 'kbit/s', 'kb/s']],
  ['Mbit/s', ['mbps', 'mbit/s']],
  ['Gbit/s', ['gbps', 'gbit/s']],
  ['MB/s', ['mb/s', 'mo/s']],
  ['GB/s', ['gb/s', 'go/s']],
  ['%', ['%', 'percent', 'pct', 'pourcent']],
  ['EUR', ['€', 'eur', 'euro', 'euros']],
  ['USD', ['$', 'usd', 'dollar', 'dollars']],
  ['GBP', ['£', 'gbp', 'pound', 'pounds']],
  ['JPY', ['¥', 'jpy', 'yen']],
  ['Hz', ['hz']],
  ['kHz', ['khz']],
  ['MHz', ['mhz']],
  ['GHz', ['ghz']],
  ['rps', ['rps', 'req/s', 'requests/s']],
  ['qps', ['qps']],
  ['rpm', ['rpm']],
  ['ops/s', ['ops/s']],
  ['fps', ['fps']],
  ['tps', ['tps']],
  ['mm', ['mm']],
  ['cm', ['cm']],
  ['m', ['m']],
  ['km', ['km']],
  ['mi', ['mi', 'mile', 'miles']],
  ['ft', ['ft', 'feet', 'foot']],
  ['px', ['px']],
  ['pt', ['pt']],
  ['em', ['em']],
  ['rem', ['rem']],
  ['mg', ['mg']],
  ['g', ['g']],
  ['kg', ['kg', 'kilo', 'kilos']],
  ['lb', ['lb', 'lbs']],
  ['°C', ['°c', '°']],
  ['°F', ['°f']],
  ['x', ['x', '×']],
  ['ord', ['st', 'nd', 'rd', 'th', 'er', 'e', 'eme', 'ème']],
];

const UNITS = new Map<string, string>(UNIT_GROUPS.flatMap(([canonical, spellings]) => spellings.map((spelling) => [spelling, canonical] as const)));

/** The canonical unit `word` names, or undefined when it is none. */
export function unitOf(word: string): string | undefined {
  return EXACT_UNITS[word] ?? UNITS.get(word.toLowerCase());
}

/** Words that multiply the number before them (attached suffixes too: `10k`, `2M`, `3bn`). */
const SCALES: Record<string, number> = {
  k: 1e3,
  K: 1e3,
  M: 1e6,
  bn: 1e9,
  thousand: 1e3,
  thousands: 1e3,
  million: 1e6,
  millions: 1e6,
  billion: 1e9,
  billions: 1e9,
  mille: 1e3,
  milliard: 1e9,
  milliards: 1e9,
};

export const scaleOf = (word: string): number | undefined => SCALES[word] ?? SCALES[word.toLowerCase()];

/** Numbers written as words (two to twenty, the tens to fifty, a hundred, a dozen; "one" and "un" are too often no number), English and French. */
const NUMBER_WORDS: Record<string, number> = {
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  hundred: 100,
  dozen: 12,
  deux: 2,
  trois: 3,
  quatre: 4,
  cinq: 5,
  sept: 7,
  huit: 8,
  neuf: 9,
  dix: 10,
  onze: 11,
  douze: 12,
  treize: 13,
  quatorze: 14,
  quinze: 15,
  seize: 16,
  vingt: 20,
  trente: 30,
  quarante: 40,
  cinquante: 50,
  cent: 100,
  douzaine: 12,
};

export const numberWord = (folded: string): number | undefined => NUMBER_WORDS[folded];

/** A value as one canonical string: no thousands separator, a point for decimals, no trailing zeros ("1.50" → "1.5"). */
export function canonicalValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded = Math.round(value * 1e6) / 1e6;
  return String(rounded);
}

/**
 * The values a number as written may stand for: `1,000` is a thousand (or, in French, one); `1.000`
 * the other way round; `1,5` one and a half; `1.234.567,8` European. Each canonical (canonicalValue).
 */
export function valuesOf(raw: string, scale = 1): string[] {
  const commas = (raw.match(/,/g) ?? []).length;
  const points = (raw.match(/\./g) ?? []).length;
  const values: number[] = [];
  const read = (text: string) => Number(text) * scale;
  if (commas === 0 && points === 0) values.push(read(raw));
  else if (commas > 0 && points > 0) {
    // The last separator is the decimal one; the other kind separates thousands.
    const decimal = raw.lastIndexOf(',') > raw.lastIndexOf('.') ? ',' : '.';
    const thousands = decimal === ',' ? /\./g : /,/g;
    values.push(read(raw.replace(thousands, '').replace(decimal, '.')));
  } else {
    const separator = commas > 0 ? ',' : '.';
    const groups = raw.split(separator);
    const grouped = groups.length > 1 && groups.slice(1).every((group) => group.length === 3) && (groups[0] as string).length <= 3;
    const many = groups.length > 2;
    if (grouped) values.push(read(groups.join('')));
    if (!many) values.push(read(raw.replace(separator, '.')));
  }
  return [...new Set(values.filter(Number.isFinite).map(canonicalValue))];
}
