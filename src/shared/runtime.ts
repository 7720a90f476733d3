/**
 * The Node.js lines live-mem is built and tested on (CI runs the whole suite on each), and when the
 * Node.js project stops maintaining them. `bin/live-mem.cjs` keeps its own copy of the list, as it
 * runs before anything is loaded; package.json's `engines` and README say the same.
 */
export const NODE_LINES: ReadonlyArray<{ major: number; endOfLife: string }> = [
  { major: 20, endOfLife: '2026-04-30' },
  { major: 22, endOfLife: '2027-04-30' },
  { major: 24, endOfLife: '2028-04-30' },
];

export interface RuntimeState {
  version: string;
  supported: boolean;
  /** The line's end of life, when it has passed on `today`. */
  pastEndOfLife?: string;
}

/** What the running Node.js (`version`, e.g. "20.20.2") is to live-mem on `today` (YYYY-MM-DD). */
export function runtimeState(version: string, today: string): RuntimeState {
  const major = Number(version.split('.')[0]);
  const line = NODE_LINES.find((candidate) => candidate.major === major);
  if (!line) return { version, supported: false };
  return { version, supported: true, ...(line.endOfLife <= today ? { pastEndOfLife: line.endOfLife } : {}) };
}
