import type { CommandDef } from '../command.js';
import { backupCommands, exportCommand, importCommand } from './backup.js';
import { bankCommands } from './bank.js';
import { compactCommand } from './compact.js';
import { connectCommand } from './connect.js';
import { consolidateCommand, consolidateStatusCommand } from './consolidate.js';
import { doctorCommand } from './doctor.js';
import { ingestCommand } from './ingest.js';
import { anchorsCommand, citeCommand, noteCommand, readCommand, searchCommand } from './live.js';
import { contextCommand, forgetCommand, historyCommands, recallCommand } from './recall.js';
import { serveCommand } from './serve.js';
import { setupCommands } from './setup.js';
import { spaceCommands } from './space.js';
import { spendCommand } from './spend.js';
import { summariesCommands } from './summaries.js';
import { aboutCommand, healthCommand, versionCommand, whoamiCommand } from './system.js';
import { tokenCommands } from './token.js';
import { uiCommand } from './ui.js';

/** Every command of `live-mem`, in the order its --help lists them (each module defines its own: command.ts). */
export const COMMANDS: CommandDef[] = [
  serveCommand,
  uiCommand,
  spaceCommands,
  noteCommand,
  ingestCommand,
  readCommand,
  anchorsCommand,
  citeCommand,
  searchCommand,
  recallCommand,
  contextCommand,
  forgetCommand,
  historyCommands,
  consolidateCommand,
  spendCommand,
  compactCommand,
  consolidateStatusCommand,
  summariesCommands,
  exportCommand,
  importCommand,
  backupCommands,
  tokenCommands,
  setupCommands,
  connectCommand,
  healthCommand,
  aboutCommand,
  doctorCommand,
  whoamiCommand,
  versionCommand,
  bankCommands,
];
