/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short words. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      row[j] = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The known name nearest to a mistyped one (a setting, a command), if one is near enough to be
 * what was meant: at most a third of its letters off. Case is ignored.
 */
export function nearest(word: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = distance(word.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(1, Math.floor(word.length / 3)) ? best.name : undefined;
}

/**
 * The known names a mistyped or shortened one may mean, nearest first, at most `max`: those at most
 * a third of its letters off (as `nearest`), and those that contain it whole (`webapp` in
 * `acme-webapp-kgtmie3wqx`, a project's space). Case is ignored.
 */
export function near(word: string, known: readonly string[], max = 3): string[] {
  const lower = word.toLowerCase();
  const limit = Math.max(1, Math.floor(word.length / 3));
  return known
    .map((name) => ({ name, d: distance(lower, name.toLowerCase()) }))
    .filter(({ name, d }) => d > 0 && (d <= limit || (lower.length >= 3 && name.toLowerCase().includes(lower))))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, max)
    .map(({ name }) => name);
}

/** " (did you mean `x`?)", or "" when nothing is near. */
export const didYouMean = (word: string, known: readonly string[]): string => {
  const match = nearest(word, known);
  return match ? ` (did you mean '${match}'?)` : '';
};
