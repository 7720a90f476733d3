import type { Checkout } from '../../shared/checkout.js';
import type { Caller } from '../caller.js';
import type { SpaceCode } from '../recall/space-code.js';
import { type Finding, plural } from './doctor-space.js';

/** Stale anchors listed in a finding, at most. */
const SHOWN = 5;

/**
 * A space's statements (bank sections, live notes) whose cited code drifted or is missing in the checkout
 * doctor runs in: a warning naming them. Nothing is repaired here: the next consolidation's prompt lists the
 * bank's (to correct or mark stale), and a note is corrected by a newer one.
 */
export async function checkAnchors(spaceCode: SpaceCode, caller: Caller, spaceId: string, checkout: Checkout): Promise<Finding[]> {
  const stale = (await spaceCode(caller, spaceId, checkout)).filter((row) => row.state === 'drifted' || row.state === 'missing');
  if (stale.length === 0) return [];
  const commit = await checkout.commit();
  const listed = stale.slice(0, SHOWN).map((row) => `${row.where} cites ${row.cites}: ${row.state} (${row.detail})`);
  return [
    {
      check: 'anchors',
      status: 'warn',
      fixable: false,
      space_id: spaceId,
      message:
        `'${spaceId}': ${plural(stale.length, 'statement')} cite code that drifted or is missing in this checkout` +
        `${commit ? ` (at ${commit.slice(0, 12)})` : ''}: ${listed.join('; ')}${stale.length > SHOWN ? `; and ${stale.length - SHOWN} more` : ''}`,
      hint: `\`live-mem anchors ${spaceId}\` lists them all; the next consolidation run here is asked to correct the bank's or mark them stale`,
    },
  ];
}
