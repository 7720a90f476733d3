import { mapLimit } from '../../shared/concurrency.js';
import { capInForce } from '../spend/cap.js';
import { type HoldState, type InspectedHold, inspectHolds } from '../spend/holds.js';
import { type Finding, plural, type SpaceCheckDeps } from './doctor-space.js';

const WHY: Record<Exclude<HoldState, 'live'>, string> = {
  expired: 'its call is long over (its process died)',
  abandoned: 'its process is gone',
  too_far: 'it runs out later than any model call may last',
  too_large: 'it claims more than the daily cap',
  unreadable: 'it is not a hold',
};

/**
 * Spend holds that count for nothing (spend/holds.ts): left by a process that died, or that no call
 * could have written — running out far ahead, claiming more than the cap, unreadable (a hand, an
 * archive). The ledger already leaves them out of the cap; they are reported so that nobody wonders
 * why a space's `_spend/` holds them, and `fix` removes them. Holds of calls in flight are left alone.
 */
export async function checkSpendHolds(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { context, fix } = deps;
  // A meta that does not read (the meta check reports it) leaves the operator's cap in force.
  const cap = await context.spend.capOf(spaceId).catch(() => capInForce({}, context.limits));
  const dead = (await inspectHolds(context, spaceId, cap)).filter(
    (entry): entry is InspectedHold & { state: Exclude<HoldState, 'live'> } => entry.state !== 'live',
  );
  if (dead.length === 0) return [];
  const shown = dead
    .slice(0, 3)
    .map((entry) => `${entry.key} (${WHY[entry.state]}${entry.hold ? `: ${entry.hold.tokens} tokens until ${entry.hold.expires_at}` : ''})`)
    .join(', ');
  const finding: Finding = {
    check: 'spend-holds',
    space_id: spaceId,
    status: 'warn',
    fixable: true,
    fix: 'removes them',
    message: `${plural(dead.length, 'spend hold')} of '${spaceId}' count for nothing against its daily cap: ${shown}${dead.length > 3 ? ', …' : ''}`,
    hint: `\`live-mem doctor ${spaceId} --fix\` removes them; a hold a hand or an archive put there is worth a look at who can write the store`,
  };
  if (!fix) return [finding];
  await mapLimit(dead, context.storage.parallelism, (entry) => context.storage.delete(entry.key));
  return [
    { ...finding, status: 'ok', fixed: true, message: `removed ${plural(dead.length, 'spend hold')} of '${spaceId}' that counted for nothing: ${shown}` },
  ];
}
