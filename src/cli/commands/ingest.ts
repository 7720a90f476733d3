import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { IngestItem, IngestProgress } from '../../core/note/ingest.js';
import { jsonlEntries, markdownEntry, mcpMemoryEntries } from '../../core/note/ingest-formats.js';
import { parseDateTime } from '../../core/validate.js';
import { invalid } from '../../shared/errors.js';
import type { CommandDef } from '../command.js';
import type { Session } from '../open.js';
import { percent } from '../progress.js';

export const INGEST_FORMATS = ['jsonl', 'mcp-memory', 'markdown'] as const;
type Format = (typeof INGEST_FORMATS)[number];

export interface IngestOptions {
  from: Format;
  dryRun?: boolean;
  timestamp?: string;
}

/** The lines of a file or of standard input ("-"), read as they come: a big file is never held whole as text. */
function linesOf(source: string): AsyncIterable<string> {
  if (source === '-' && process.stdin.isTTY) process.stderr.write('live-mem: reading JSON lines from standard input (Ctrl-D to end, Ctrl-C to cancel)\n');
  const input = source === '-' ? process.stdin : createReadStream(source);
  return createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
}

async function requireFile(file: string): Promise<Date> {
  const found = await stat(file); // a missing file fails here, before the store is touched
  if (found.isDirectory()) throw invalid(`${file} is a folder: give a file, or --from markdown for a folder of notes`);
  return found.mtime;
}

/** Every `*.md` under `folder` (hidden files and folders skipped), in name order: one entry each. */
async function* markdownFolder(folder: string): AsyncGenerator<IngestItem> {
  const names = (await readdir(folder, { recursive: true }))
    .filter((name) => name.endsWith('.md') && !name.split(path.sep).some((part) => part.startsWith('.')))
    .sort();
  for (const name of names) {
    const file = path.join(folder, name);
    const info = await stat(file);
    if (!info.isFile()) continue;
    const text = await readFile(file, 'utf8');
    yield markdownEntry(text, name.split(path.sep).join('/'), info.mtime);
  }
}

async function itemsOf(source: string, options: IngestOptions): Promise<AsyncIterable<IngestItem>> {
  switch (options.from) {
    case 'jsonl':
      if (source !== '-') await requireFile(source);
      return jsonlEntries(linesOf(source));
    case 'mcp-memory': {
      const given = options.timestamp === undefined ? undefined : parseDateTime(options.timestamp, '--timestamp');
      if (source === '-' && !given) throw invalid('memory.jsonl keeps no dates: from standard input, give --timestamp <datetime> for its entities');
      const mtime = source === '-' ? undefined : await requireFile(source);
      return mcpMemoryEntries(linesOf(source), (given ?? mtime) as Date);
    }
    case 'markdown':
      if (source === '-') throw invalid('--from markdown reads a folder, not standard input');
      if (!(await stat(source)).isDirectory()) throw invalid(`${source} is not a folder: --from markdown reads the *.md files of a folder`);
      return markdownFolder(source);
  }
}

/** `live-mem ingest <space> [source]`: notes with their own times, from JSON lines, a memory.jsonl or a folder of Markdown notes. */
export async function ingest({ core, caller, progress }: Session, spaceId: string, source: string | undefined, options: IngestOptions) {
  if (options.timestamp !== undefined && options.from !== 'mcp-memory') {
    throw invalid('--timestamp is for --from mcp-memory (other formats carry their own times)');
  }
  const from = source ?? '-';
  const label = from === '-' ? 'standard input' : path.basename(from);
  const items = await itemsOf(from, options);
  const onProgress = (event: IngestProgress) =>
    progress.update(
      event.phase === 'checking'
        ? `ingest ${label} · checking ${event.done.toLocaleString('en-US')} entries`
        : `ingest ${label} · writing ${event.done.toLocaleString('en-US')}/${(event.total ?? 0).toLocaleString('en-US')} ${percent(event.done, event.total)}`,
    );
  return core.notes.ingest(caller, { space_id: spaceId, dry_run: options.dryRun === true }, items, { onProgress });
}

export const ingestCommand: CommandDef = {
  name: 'ingest <space_id> [source]',
  description:
    'write notes with their original times from JSON lines (a file, or standard input when absent or "-"), a memory.jsonl or a folder of Markdown notes; create-only, so running it again writes nothing twice (owner or admin)',
  options: [
    { flags: '--from <format>', description: 'what the source is', choices: INGEST_FORMATS, default: 'jsonl' },
    { flags: '--timestamp <datetime>', description: "--from mcp-memory: the time of every entity (default: the file's modification time)" },
    { flags: '--dry-run', description: 'check everything and show what would be written; write nothing' },
  ],
  run: ingest,
  view: 'ingest',
  examples: [
    'live-mem ingest my-project history.jsonl --dry-run',
    'live-mem ingest my-project ~/.local/share/memory.jsonl --from mcp-memory',
    'live-mem ingest my-project ./notes --from markdown',
  ],
};
