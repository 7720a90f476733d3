import { forTerminal } from './terminal.js';

/**
 * The progress display of long commands: one line on stderr, rewritten in place, when stderr is a
 * terminal; nothing at all otherwise (a pipe, a file, a CI log, `-q`), so scripts read clean output.
 * Log lines written meanwhile go above it: it is erased, the line written, then it is drawn again.
 */
export interface ProgressLine {
  /** Shows `text` as the progress line (at most every `intervalMs`; the latest text always ends up drawn). */
  update(text: string): void;
  /** Writes a whole line (a log line) without tearing the progress line. */
  log(line: string): void;
  /** Erases the progress line, before a result or an error is printed. */
  clear(): void;
}

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): unknown;
}

export interface ProgressOptions {
  /** Default: whether the stream is a terminal. */
  enabled?: boolean;
  /** Nothing is drawn before this many ms after the first update: quick commands never flicker. Default 250. */
  delayMs?: number;
  /** Least time between two draws. Default 100. */
  intervalMs?: number;
  now?: () => number;
}

const ERASE = '\r\x1b[K';

/** `text` on one line that fits `columns` (a line that wraps cannot be rewritten in place). */
export function fitLine(text: string, columns: number | undefined): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  const width = Math.max(20, (columns || 80) - 1);
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

export function createProgressLine(stream: ProgressStream, options: ProgressOptions = {}): ProgressLine {
  const enabled = options.enabled ?? stream.isTTY === true;
  const delayMs = options.delayMs ?? 250;
  const intervalMs = options.intervalMs ?? 100;
  const now = options.now ?? Date.now;
  let text: string | undefined;
  let shown = false;
  let firstAt: number | undefined;
  let drawnAt = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;

  let drawn: string | undefined;
  const draw = () => {
    timer = undefined;
    if (text === undefined) return;
    drawnAt = now();
    const line = fitLine(forTerminal(text), stream.columns);
    if (shown && line === drawn) return;
    stream.write(`${ERASE}${line}`);
    drawn = line;
    shown = true;
  };

  return {
    update(next) {
      if (!enabled) return;
      text = next;
      const at = now();
      firstAt ??= at;
      const wait = Math.max(firstAt + delayMs - at, drawnAt + intervalMs - at);
      if (wait <= 0) draw();
      else timer ??= setTimeout(draw, wait).unref();
    },
    log(raw) {
      const line = forTerminal(raw); // a log line may name a space's file or quote a model's reply
      if (!shown) {
        stream.write(line);
        return;
      }
      stream.write(`${ERASE}${line}`);
      stream.write(drawn ?? '');
    },
    clear() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      text = undefined;
      firstAt = undefined;
      if (shown) stream.write(ERASE);
      shown = false;
    },
  };
}

/** 1234567 → "1.2 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** "40%" of done/total, or "" when the total is unknown. */
export const percent = (done: number, total: number | null | undefined): string => (total ? `${Math.min(100, Math.floor((done / total) * 100))}%` : '');
