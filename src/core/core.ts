import { createAuthService, type AuthSettings } from './auth/auth-service.js';
import { createBackupService } from './backup/backup-service.js';
import { createBankService } from './bank/bank-service.js';
import { createConsolidationService } from './consolidation/consolidation-service.js';
import { createConsolidationJobs } from './consolidation/jobs.js';
import { createContext, type CoreContext, type CoreOptions } from './context.js';
import { createNoteService } from './note/note-service.js';
import { createSpaceService } from './space/space-service.js';
import { createHealth } from './system/health.js';

/**
 * The live-mem library: every capability as plain async functions taking a Caller. The MCP server
 * and the CLI are thin shells over this object; neither holds logic of its own.
 */
export function createCore(options: CoreOptions & { auth?: AuthSettings }) {
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
  const auth = createAuthService(context, options.auth ?? { required: false, ownerAgent: 'local' });
  const health = createHealth(context);
  return { context, spaces, notes, bank, consolidation, jobs, backups, auth, health };
}

export type Core = ReturnType<typeof createCore>;
