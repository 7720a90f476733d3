/** Builds tar(.gz) archives entry by entry, including ones live-mem must refuse (links, devices, escapes). */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';

export interface CraftedEntry {
  path: string;
  body?: string | Buffer;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'BlockDevice' | 'FIFO';
  linkpath?: string;
}

export function craftTar(entries: CraftedEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '');
    const type = entry.type ?? 'File';
    const size = type === 'File' ? body.length : 0;
    const header = new Header({ path: entry.path, mode: 0o644, size, mtime: new Date(0), type, ...(entry.linkpath ? { linkpath: entry.linkpath } : {}) });
    if (header.encode()) blocks.push(new Pax({ path: entry.path, size, mtime: new Date(0) }).encode());
    blocks.push(header.block as Buffer);
    if (size > 0) blocks.push(body, Buffer.alloc((512 - (size % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export const craftTarGz = (entries: CraftedEntry[]): Buffer => gzipSync(craftTar(entries));

/** A minimal valid space archive (meta, rules, one note) and its manifest; `tweak` edits either before packing. */
export function validSpaceEntries(
  spaceId = 'crafted',
  tweak: (files: Array<{ path: string; body: string }>, manifest: Record<string, unknown>) => void = () => undefined,
): CraftedEntry[] {
  const files = [
    {
      path: '_meta.json',
      body: JSON.stringify({
        space_id: spaceId,
        description: 'crafted',
        owner: 'x',
        created_at: '2026-01-01T00:00:00Z',
        last_consolidation: null,
        consolidation_count: 0,
        total_notes_processed: 0,
      }),
    },
    { path: '_rules.md', body: '# Rules\n' },
    {
      path: 'live/20260101T000000_a_todo_00aaaaaa.md',
      body: '---\ntimestamp: "2026-01-01T00:00:00Z"\nagent: "a"\ncategory: "todo"\ntags: []\nspace_id: "crafted"\n---\n\nhello',
    },
  ];
  const manifest: Record<string, unknown> = {
    format: 'live-mem-backup',
    format_version: 1,
    live_mem_version: '0.0.0',
    space_id: spaceId,
    created_at: '2026-01-01T00:00:00Z',
    description: '',
    files: [] as unknown[],
    total_size: 0,
  };
  tweak(files, manifest);
  if ((manifest.files as unknown[]).length === 0) {
    manifest.files = files.map((f) => ({ path: f.path, size: Buffer.byteLength(f.body), sha256: createHash('sha256').update(f.body).digest('hex') }));
  }
  return [...files.map((f) => ({ path: `${spaceId}/${f.path}`, body: f.body })), { path: 'manifest.json', body: JSON.stringify(manifest) }];
}
