import { createBackupService } from './backup/backup-service.js';
import { createBankService } from './bank/bank-service.js';
import { createConsolidationService } from './consolidation/consolidation-service.js';
import { createConsolidationJobs } from './consolidation/jobs.js';
import { createContext, type CoreContext, type CoreOptions } from './context.js';
import { createNoteService } from './note/note-service.js';
import { createSpaceService } from './space/space-service.js';

/**
 * The live-mem library: every capability as plain async functions taking a Caller. The MCP server
 * and the CLI are thin shells over this object; neither holds logic of its own.
 */
export function createCore(options: CoreOptions) {
  const context: CoreContext = createContext(options);
  const notes = createNoteService(context);
  const bank = createBankService(context);
  const spaces = createSpaceService(context, {
    countLiveNotes: (spaceId) => notes.stats(spaceId),
    listBank: (spaceId) => bank.listFiles(spaceId),
    readBank: (spaceId) => bank.readAll(spaceId),
  });
  const consolidation = createConsolidationService(context);
  const jobs = createConsolidationJobs(context, consolidation);
  const backups = createBackupService(context);
  return { context, spaces, notes, bank, consolidation, jobs, backups };
}

export type Core = ReturnType<typeof createCore>;
