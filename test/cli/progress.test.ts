import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProgressLine, fitLine, formatBytes, percent } from '../../src/cli/progress.js';

/** A fake stderr that records what was written, and a clock the test moves. */
function terminal(columns = 40) {
  const writes: string[] = [];
  let now = 0;
  return {
    stream: { isTTY: true, columns, write: (chunk: string) => writes.push(chunk) },
    writes,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const ERASE = '\r\x1b[K';

describe('progress line', () => {
  it('draws one line in place, erases it at the end, and keeps log lines whole', () => {
    const tty = terminal();
    const progress = createProgressLine(tty.stream, { delayMs: 0, intervalMs: 0, now: tty.now });
    progress.update('export demo · 10%');
    progress.update('export demo · 20%');
    assert.deepEqual(tty.writes, [`${ERASE}export demo · 10%`, `${ERASE}export demo · 20%`]);
    progress.log('[live-mem] warn: something\n');
    assert.deepEqual(tty.writes.slice(2), [`${ERASE}[live-mem] warn: something\n`, 'export demo · 20%'], 'the log line above, the progress redrawn');
    progress.clear();
    assert.equal(tty.writes.at(-1), ERASE);
    progress.log('after\n');
    assert.equal(tty.writes.at(-1), 'after\n', 'nothing to erase once cleared');
  });

  it('waits before its first draw and draws at most every interval, the latest text last', async () => {
    const tty = terminal();
    const progress = createProgressLine(tty.stream, { delayMs: 200, intervalMs: 50, now: tty.now });
    progress.update('quick');
    assert.deepEqual(tty.writes, [], 'a command done within the delay never shows progress');
    tty.advance(200);
    progress.update('step 1');
    progress.update('step 2');
    assert.deepEqual(tty.writes, [`${ERASE}step 1`]);
    tty.advance(60);
    await new Promise((resolve) => setTimeout(resolve, 80)); // the pending text is drawn by a timer
    assert.deepEqual(tty.writes, [`${ERASE}step 1`, `${ERASE}step 2`]);
    progress.clear();
  });

  it('is silent when not a terminal (a pipe, a file) or disabled (-q): log lines still pass', () => {
    for (const [isTTY, enabled] of [
      [false, undefined],
      [true, false],
    ] as const) {
      const writes: string[] = [];
      const stream = { isTTY, write: (chunk: string) => writes.push(chunk) };
      const progress = createProgressLine(stream, { delayMs: 0, intervalMs: 0, ...(enabled === undefined ? {} : { enabled }) });
      progress.update('working');
      progress.log('a log line\n');
      progress.clear();
      assert.deepEqual(writes, ['a log line\n']);
    }
  });

  it('shows control characters of a name or a log line as visible ones, never raw', () => {
    const tty = terminal(80);
    const progress = createProgressLine(tty.stream, { delayMs: 0, intervalMs: 0, now: tty.now });
    progress.update('consolidate evil · \x1b]0;title\x07');
    progress.log('[live-mem] warn: file \x1b[2J\x9b.md\n');
    assert.deepEqual(tty.writes, [`${ERASE}consolidate evil · ␛]0;title␇`, `${ERASE}[live-mem] warn: file ␛[2J\\u009b.md\n`, 'consolidate evil · ␛]0;title␇']);
  });

  it('fits its text on one line of the terminal', () => {
    assert.equal(fitLine('a\nb', 80), 'a b');
    const long = fitLine('x'.repeat(100), 30);
    assert.equal(long.length, 29);
    assert.ok(long.endsWith('…'));
    assert.equal(fitLine('short', 0), 'short', 'unknown width: 80 columns');
  });

  it('formats sizes and shares', () => {
    assert.equal(formatBytes(999), '999 B');
    assert.equal(formatBytes(1_234_567), '1.2 MB');
    assert.equal(formatBytes(45_000_000), '45 MB');
    assert.equal(percent(1, 3), '33%');
    assert.equal(percent(5, null), '');
  });
});
