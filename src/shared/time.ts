/**
 * The one format of the timestamps live-mem writes into results and records: ISO 8601 at second
 * precision, as the seed writes a note's `timestamp` and a space's `created_at` (2026-02-20T18:05:12Z).
 * Order within a second comes from ids, never from these.
 */
export const isoSeconds = (time: Date): string => `${time.toISOString().slice(0, 19)}Z`;
