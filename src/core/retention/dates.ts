/**
 * Dates and times as notes write them, read to one canonical key each so the forms compare:
 * `2023-05-08`, `8 May 2023`, `May 8th, 2023`, `08/05/2023` (day and month both ways when either
 * could be), `le 8 mai 2023`; `May 2023`; `14:30`, `2:30 pm`, `14h30`. A date without its year is
 * `--MM-DD`, a month `YYYY-MM`, a year `YYYY`. Relative dates ("yesterday") are no item.
 */

const MONTH_NAMES: Array<[number, string[]]> = [
  [1, ['january', 'jan', 'janvier', 'janv']],
  [2, ['february', 'feb', 'fevrier', 'février', 'fevr', 'févr']],
  [3, ['march', 'mar', 'mars']],
  [4, ['april', 'apr', 'avril', 'avr']],
  [5, ['may', 'mai']],
  [6, ['june', 'jun', 'juin']],
  [7, ['july', 'jul', 'juillet', 'juil']],
  [8, ['august', 'aug', 'aout', 'août']],
  [9, ['september', 'sep', 'sept', 'septembre']],
  [10, ['october', 'oct', 'octobre']],
  [11, ['november', 'nov', 'novembre']],
  [12, ['december', 'dec', 'decembre', 'décembre', 'déc']],
];
const MONTHS = new Map(MONTH_NAMES.flatMap(([month, names]) => names.map((name) => [name, month] as const)));
const MONTH = [...MONTHS.keys()].sort((a, b) => b.length - a.length).join('|');

/** Each pattern with how it reads its match: day, month and year, any of them absent. */
export const DATE_PATTERNS: Array<{ pattern: RegExp; read: (m: RegExpExecArray) => Array<{ y?: number; m?: number; d?: number }> }> = [
  {
    // 2023-05-08, 2023/05/08, 2023.05.08 (a time after it is read by TIME_PATTERNS)
    pattern: /(?<![\p{N}])(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?![\p{N}])/gu,
    read: (m) => [{ y: Number(m[1]), m: Number(m[3]), d: Number(m[4]) }],
  },
  {
    // 8 May 2023, 8th of May, le 8 mai 2023, 1er mai
    pattern: new RegExp(`(?<![\\p{L}\\p{N}])(\\d{1,2})(?:st|nd|rd|th|er)?\\s+(?:of\\s+)?(${MONTH})\\.?(?:,?\\s+(\\d{4}))?(?![\\p{L}\\p{N}])`, 'giu'),
    read: (m) => [{ d: Number(m[1]), m: monthOf(m[2]), ...(m[3] ? { y: Number(m[3]) } : {}) }],
  },
  {
    // May 8, 2023; May 8th
    pattern: new RegExp(`(?<![\\p{L}])(${MONTH})\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s+(\\d{4}))?(?![\\p{L}\\p{N}:])`, 'giu'),
    read: (m) => [{ m: monthOf(m[1]), d: Number(m[2]), ...(m[3] ? { y: Number(m[3]) } : {}) }],
  },
  {
    // May 2023, mai 2023
    pattern: new RegExp(`(?<![\\p{L}])(${MONTH})\\.?,?\\s+(\\d{4})(?![\\p{N}])`, 'giu'),
    read: (m) => [{ m: monthOf(m[1]), y: Number(m[2]) }],
  },
  {
    // 08/05/2023 or 05/08/2023: day first (most of the world) or month first (the US), both kept when both can be
    pattern: /(?<![\p{N}/.-])(\d{1,2})([/.])(\d{1,2})\2(\d{4}|\d{2})(?![\p{N}/.-])/gu,
    read: (m) => {
      const a = Number(m[1]);
      const b = Number(m[3]);
      const y = (m[4] as string).length === 2 ? 2000 + Number(m[4]) : Number(m[4]);
      return [
        { y, m: b, d: a },
        { y, m: a, d: b },
      ];
    },
  },
];

export const TIME_PATTERNS: Array<{ pattern: RegExp; read: (m: RegExpExecArray) => { h: number; min: number } }> = [
  {
    pattern: /(?<![\p{N}:])(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?\s*(a\.?m\.?|p\.?m\.?)?(?![\p{N}])/giu,
    read: (m) => ({ h: hour24(Number(m[1]), m[3]), min: Number(m[2]) }),
  },
  { pattern: /(?<![\p{N}])(\d{1,2})\s*(a\.?m\.?|p\.?m\.?)(?![\p{L}])/giu, read: (m) => ({ h: hour24(Number(m[1]), m[2]), min: 0 }) },
  { pattern: /(?<![\p{N}])(\d{1,2})\s?h\s?(\d{2})(?![\p{N}])/giu, read: (m) => ({ h: Number(m[1]), min: Number(m[2]) }) },
];

function monthOf(name: string | undefined): number | undefined {
  return MONTHS.get((name ?? '').toLowerCase());
}

function hour24(hour: number, meridiem: string | undefined): number {
  if (!meridiem) return hour;
  const pm = /^p/i.test(meridiem);
  return (hour % 12) + (pm ? 12 : 0);
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** The key of a date read, or undefined when it is no date (month 13, day 32, neither day nor year). */
export function dateKey(date: { y?: number; m?: number; d?: number }): string | undefined {
  const { y, m, d } = date;
  if (m === undefined || m < 1 || m > 12) return y !== undefined && m === undefined && d === undefined ? String(y) : undefined;
  if (d !== undefined && (d < 1 || d > 31)) return undefined;
  if (y !== undefined && (y < 1000 || y > 2999)) return undefined;
  if (d === undefined) return y === undefined ? undefined : `${y}-${pad(m)}`;
  return y === undefined ? `--${pad(m)}-${pad(d)}` : `${y}-${pad(m)}-${pad(d)}`;
}

export const timeKey = (time: { h: number; min: number }): string | undefined =>
  time.h <= 24 && time.min < 60 ? `${pad(time.h % 24)}:${pad(time.min)}` : undefined;

/** A date key and every less precise key it also answers for (`2023-05-08` is also `--05-08`, `2023-05`, `2023`). */
export function dateKeysCovered(key: string): string[] {
  const full = /^(\d{4})-(\d{2})-(\d{2})$/.exec(key);
  if (full) return [key, `--${full[2]}-${full[3]}`, `${full[1]}-${full[2]}`, full[1] as string];
  const month = /^(\d{4})-(\d{2})$/.exec(key);
  if (month) return [key, month[1] as string];
  return [key];
}
