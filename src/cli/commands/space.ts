import { readFile } from 'node:fs/promises';
import { invalid } from '../../shared/errors.js';
import type { Session } from '../open.js';
import { textFrom } from './bank.js';

export async function spaceCreate(
  { core, caller }: Session,
  spaceId: string,
  options: { description?: string; owner?: string; rules?: string; rulesFile?: string },
) {
  if (options.rules !== undefined && options.rulesFile !== undefined) throw invalid('give --rules or --rules-file, not both');
  const rules = options.rulesFile !== undefined ? await readFile(options.rulesFile, 'utf8') : options.rules;
  return core.spaces.create(caller, {
    space_id: spaceId,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(rules !== undefined ? { rules } : {}),
  });
}

export const spaceList = ({ core, caller }: Session) => core.spaces.list(caller);
export const spaceInfo = ({ core, caller }: Session, spaceId: string) => core.spaces.info(caller, { space_id: spaceId });
export const spaceRules = ({ core, caller }: Session, spaceId: string) => core.spaces.rules(caller, { space_id: spaceId });
export const spaceSummary = ({ core, caller }: Session, spaceId: string) => core.spaces.summary(caller, { space_id: spaceId });

export const spaceUpdate = ({ core, caller }: Session, spaceId: string, options: { description?: string; owner?: string; llmDailyTokens?: number }) =>
  core.spaces.update(caller, {
    space_id: spaceId,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(options.llmDailyTokens !== undefined ? { llm_daily_tokens: options.llmDailyTokens } : {}),
  });

export const spaceDelete = ({ core, caller }: Session, spaceId: string, options: { yes?: boolean }) =>
  core.spaces.delete(caller, { space_id: spaceId, confirm: options.yes === true });

/** `space update-rules SPACE [FILE]`: the whole new rules (a file, or standard input), against `--if-match` (`space rules --json` gives it). */
export async function spaceUpdateRules(
  { core, caller }: Session,
  spaceId: string,
  file: string | undefined,
  options: { ifMatch?: string; reason?: string; secret?: boolean },
) {
  const rules = await textFrom(file, 'the new rules');
  return core.revisions.updateRules(caller, {
    space_id: spaceId,
    rules,
    ...(options.ifMatch !== undefined ? { if_match: options.ifMatch } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.secret === true ? { secret: true } : {}),
  });
}
