import { invalid } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import { MANIFEST_ENTRY, sha256 } from '../backup-manifest.js';
import type { CoreContext } from '../context.js';
import { checkBankFileSize, validateSpaceId } from '../validate.js';
import { readArchive } from './archive.js';
import { type FileRedaction, redactImported } from './import-redaction.js';
import { requireAbsent, renamed } from './restore-target.js';
import { importedBody } from './space-content.js';
import { writeSpace } from './space-snapshot.js';
import { tally, type TransferOptions } from './transfer-progress.js';
import { importCaps, verifyArchive } from './verify-archive.js';

/**
 * Imports an archive (read twice: once to verify everything, once to write), as its own space or
 * under `as`. Nothing is written unless the whole archive checks out.
 */
export async function importArchive(context: CoreContext, caller: Caller, open: () => AsyncIterable<Buffer>, options: { as?: string } & TransferOptions = {}) {
  // In this first pass, before anything is written: a bank file past the size cap refuses the
  // import, and with LIVE_MEM_REDACT=refuse so does a secret.
  const inspect = (path: string, body: Buffer) => {
    const relative = path.slice(path.indexOf('/') + 1);
    if (/^(bank\/[^/]+\.md|_synthesis\.md)$/.test(relative) && body.length > context.limits.bankFileMaxBytes) {
      checkBankFileSize(relative, body.toString('utf8'), context.limits.bankFileMaxBytes);
    }
    if (context.redact === 'refuse') redactImported(relative, body, 'refuse');
  };
  const manifest = await verifyArchive(open, importCaps(context.limits), options.onProgress, inspect);
  const spaceId = validateSpaceId(options.as ?? manifest.space_id);
  authorize(caller, 'admin', spaceId);
  await requireAbsent(context.storage, spaceId, 'import it under another space id');
  const prefix = `${manifest.space_id}/`;
  const passed = tally('writing', manifest.files.length, options.onProgress);
  // The archive is read again to write it: each entry must be one the first pass verified, or a
  // file changed in between could bring in what the verification refused.
  const verified = new Map(manifest.files.map((file) => [prefix + file.path, file]));
  const redacted: FileRedaction[] = [];
  const restored = await writeSpace(context, caller, spaceId, async (write) => {
    await readArchive(
      open(),
      async ({ path, body }) => {
        if (path === MANIFEST_ENTRY) return;
        const file = verified.get(path);
        if (!file || file.size !== body.length || file.sha256 !== sha256(body)) {
          throw invalid(`the archive changed while it was imported (${JSON.stringify(path)} differs from what was verified); nothing imported`);
        }
        verified.delete(path);
        passed(body);
        const relative = path.slice(prefix.length);
        // Verified as the archive holds it; line endings normalised and secrets masked in what is written (redact/redact.ts).
        const masked = redactImported(relative, importedBody(relative, body), context.redact);
        if (masked.report) redacted.push(masked.report);
        await write(relative, renamed(relative, masked.body, spaceId));
      },
      importCaps(context.limits),
    );
    if (verified.size > 0) throw invalid('the archive changed while it was imported (files verified are gone); nothing imported');
  });
  return {
    status: 'ok' as const,
    space_id: spaceId,
    from_space: manifest.space_id,
    files_restored: restored,
    total_size: manifest.total_size,
    checksums_verified: manifest.files.length,
    ...(redacted.length > 0 ? { redacted_files: redacted } : {}),
  };
}
