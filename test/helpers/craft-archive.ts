/** Builds tar(.gz) archives entry by entry, including ones live-mem must refuse (links, devices, escapes). */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
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

const MIB = 1024 * 1024;

/**
 * Writes to `file` a valid space archive (meta, rules, a note, and a manifest with every checksum
 * right) holding one more entry, `path`, of `size` zero bytes — the shape of an archive bomb. The
 * gzip stream is written as members one after the other, the entry's body one compressed MiB
 * repeated: a 2 GiB entry makes a 9.4 MB file (each MiB lightly compressed, 229×, under tar's 1000×
 * ratio guard), written in a second while this process holds one MiB of it.
 */
export async function writeArchiveWithLargeEntry(file: string, options: { spaceId?: string; path: string; size: number }): Promise<void> {
  const spaceId = options.spaceId ?? 'crafted';
  const zeros = Buffer.alloc(MIB);
  const hash = createHash('sha256');
  for (let left = options.size; left > 0; left -= MIB) hash.update(left >= MIB ? zeros : zeros.subarray(0, left));
  const large = { path: options.path, size: options.size, sha256: hash.digest('hex') };
  const entries = validSpaceEntries(spaceId, (files, manifest) => {
    manifest.files = [
      ...files.map((f) => ({ path: f.path, size: Buffer.byteLength(f.body), sha256: createHash('sha256').update(f.body).digest('hex') })),
      large,
    ];
  });
  const manifest = entries.pop() as CraftedEntry;
  const head = craftTar(entries).subarray(0, -1024); // without the end-of-archive blocks
  const header = new Header({ path: `${spaceId}/${options.path}`, mode: 0o644, size: options.size, mtime: new Date(0), type: 'File' });
  header.encode();
  const member = gzipSync(zeros, { level: 1 });
  const out = createWriteStream(file);
  const write = async (chunk: Buffer) => {
    if (!out.write(chunk)) await once(out, 'drain');
  };
  await write(gzipSync(Buffer.concat([head, header.block as Buffer]), { level: 1 }));
  for (let left = options.size; left > 0; left -= MIB) await write(left >= MIB ? member : gzipSync(zeros.subarray(0, left), { level: 1 }));
  await write(gzipSync(Buffer.concat([Buffer.alloc((512 - (options.size % 512)) % 512), craftTar([manifest])]), { level: 1 }));
  out.end();
  await once(out, 'close');
}
