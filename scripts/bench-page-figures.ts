/**
 * What every section of the benchmark page (bench-page.ts) prints beside a figure: the machine's load as
 * the figure's run started and ended, and the figure itself only when it can be computed — a NaN or a
 * missing value stops the page instead of reaching it.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

/** The machine's 1-minute load average as a block of figures started and ended. */
export interface Load {
  start: number;
  end: number;
}
export const loadText = ({ start, end }: Load): string => `${start.toFixed(1)} → ${end.toFixed(1)}`;

export async function measured<T>(run: () => Promise<T>): Promise<{ value: T; load: Load; seconds: number }> {
  const start = loadavg()[0] ?? 0;
  const began = performance.now();
  const value = await run();
  return { value, load: { start, end: loadavg()[0] ?? 0 }, seconds: (performance.now() - began) / 1000 };
}

/** A figure that cannot be computed stops the page: a NaN or a missing value is never printed. */
export function checked(name: string, value: number | null | undefined, digits = 3): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`benchmark page: ${name} cannot be computed (${String(value)})`);
  return value.toFixed(digits);
}
