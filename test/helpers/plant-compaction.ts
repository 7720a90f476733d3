import type { StorageDriver } from '../../src/storage/types.js';

export interface PlantedSection {
  filename: string;
  path: string[];
  content: string;
}

/**
 * Writes a compaction's history entry straight into a store, as the commit protocol does (shared
 * design §1): `preimages.json`, then `record.json` (kind "compaction", no notes, no notes.json) —
 * and, when given, the bank file as the compaction left it.
 */
export async function plantCompaction(
  storage: StorageDriver,
  spaceId: string,
  entry: { id: string; committed_at: string; sections: PlantedSection[]; bank?: Record<string, string> },
): Promise<void> {
  for (const [filename, content] of Object.entries(entry.bank ?? {})) await storage.put(`${spaceId}/bank/${filename}`, content);
  await storage.put(`${spaceId}/history/${entry.id}/preimages.json`, `${JSON.stringify({ version: 1, sections: entry.sections }, null, 1)}\n`);
  const files = [...new Set(entry.sections.map((section) => section.filename))];
  const record = {
    id: entry.id,
    space_id: spaceId,
    kind: 'compaction',
    committed_at: entry.committed_at,
    notes: [],
    time_range: { oldest: null, newest: null },
    bank_files: files.map((filename) => ({ filename, kind: 'updated' })),
    metrics: { by: 'planted', model: 'scripted' },
    preimages: entry.sections.length,
  };
  await storage.put(`${spaceId}/history/${entry.id}/record.json`, `${JSON.stringify(record, null, 2)}\n`);
}
