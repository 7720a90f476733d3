/**
 * The note as live-mem writes it, for the benchmark's bare reference servers (minimal-note-server.mjs
 * over stdio, minimal-eras-server.mjs over HTTP): the same name, the same front-matter, created with
 * the same guarantee (a temp file opened ahead, written, linked to its name, fsynced before the
 * answer), and nothing else. Kept in one place so that test/bench/minimal-note-server.test.ts, which
 * checks the bytes against live-mem's, covers every server that uses it.
 */
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { customAlphabet } from 'nanoid';

const randomId = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 6);

/**
 * A writer of notes into `dir` as `agent`, which also answers `live_search` as live-mem does (the
 * newest notes whose content or tags hold the query, case-insensitively, `limit` of them) over the
 * notes it wrote, kept in memory. `close()` removes the spare temp file.
 */
export function noteWriter(dir, agent) {
  mkdirSync(dir, { recursive: true });
  let spare; // a temp file opened ahead, as live-mem's fs driver keeps one
  let spares = 0;
  let lastMs = 0;
  /** The notes written, oldest first, with the lowercased texts live_search matches. */
  const written = [];
  const openSpare = () => {
    const temp = path.join(dir, `.spare-${process.pid}-${spares++}.lmtmp`);
    spare = { temp, fd: openSync(temp, 'wx', 0o600) };
  };

  function write({ space_id, category, content, tags = '' }) {
    lastMs = Math.max(Date.now(), lastMs + 1);
    const time = new Date(lastMs);
    const iso = time.toISOString();
    const timestamp = `${iso.slice(0, 19)}Z`;
    const millis = time.getUTCMilliseconds().toString(36).padStart(2, '0');
    const filename = `${iso.replace(/[-:]/g, '').slice(0, 15)}_${agent}_${category}_${millis}${randomId()}.md`;
    const tagList = tags
      .split(',')
      .map((tag) => tag.trim())
      .filter(Boolean);
    const q = JSON.stringify;
    const body = Buffer.from(
      [
        '---',
        `timestamp: ${q(timestamp)}`,
        `agent: ${q(agent)}`,
        `category: ${q(category)}`,
        `tags: [${tagList.map(q).join(', ')}]`,
        `space_id: ${q(space_id)}`,
        '---',
        '',
        content,
      ].join('\n'),
    );
    if (!spare) openSpare();
    const { temp, fd } = spare;
    spare = undefined;
    writeSync(fd, body, 0, body.length, 0);
    linkSync(temp, path.join(dir, filename));
    unlinkSync(temp);
    fsyncSync(fd);
    closeSync(fd);
    // After the answer, as live-mem does; notes written meanwhile (calls at once, over HTTP) have opened their own.
    setImmediate(() => spare || openSpare());
    written.push({ note: { filename, timestamp, agent, category, tags: tagList, content }, texts: [content, ...tagList].map((t) => t.toLowerCase()) });
    return { status: 'created', space_id, filename, category, agent, tags: tagList, size: body.length, timestamp };
  }

  function search({ space_id, query, limit = 20 }) {
    const needle = query.toLowerCase();
    const notes = [];
    let found = 0;
    for (let i = written.length - 1; i >= 0; i--) {
      const { note, texts } = written[i];
      if (!texts.some((text) => text.includes(needle))) continue;
      if (found++ < limit) notes.push(note);
      else break; // one past the limit says there is more, as live-mem stops
    }
    return { status: 'ok', space_id, query, notes, total: notes.length, has_more: found > limit };
  }

  const close = () => {
    if (spare) unlinkSync(spare.temp);
    spare = undefined;
  };
  return { write, search, close };
}
