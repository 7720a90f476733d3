import type { Checkout } from '../../shared/checkout.js';
import type { Anchor } from '../anchors/anchor.js';
import { type CheckedAnchor, citedAs, withCheckedAnchors } from '../anchors/note-anchors.js';
import type { Caller } from '../caller.js';
import type { BankCode } from './bank-code.js';

/** One anchored statement of a space and its state in a checkout: a bank section's (`bank file > Section`) or a live note's. */
export interface CodeRow {
  where: string;
  cites: string;
  state: CheckedAnchor['state'];
  detail: string;
}

export interface SpaceCodeParts {
  bankCode: BankCode;
  bankFiles(caller: Caller, spaceId: string): Promise<ReadonlyArray<{ filename: string; content: string }>>;
  liveNotes(caller: Caller, spaceId: string, limit: number): Promise<ReadonlyArray<{ filename: string; anchors?: Anchor[] }>>;
}

/**
 * Every anchored statement a space states now — its bank's sections (through their notes) and its live
 * notes — checked in a checkout: `live-mem anchors`, and doctor's stale anchors. Consolidated notes are
 * left out: what they said is the bank's now, or was superseded.
 */
export function createSpaceCode(parts: SpaceCodeParts) {
  return async function spaceCode(caller: Caller, spaceId: string, checkout: Checkout | undefined, limit = 1000): Promise<CodeRow[]> {
    const [files, notes] = await Promise.all([parts.bankFiles(caller, spaceId), parts.liveNotes(caller, spaceId, limit)]);
    const row = (where: string, anchor: CheckedAnchor): CodeRow => ({ where, cites: citedAs(anchor), state: anchor.state, detail: anchor.detail });
    return [
      ...(await parts.bankCode.check(spaceId, files, checkout)).map((code) => row(`bank ${code.filename}${code.section ? ` > ${code.section}` : ''}`, code)),
      ...(await withCheckedAnchors(checkout, notes)).flatMap((checked) => (checked.anchors ?? []).map((anchor) => row(checked.filename, anchor))),
    ];
  };
}

export type SpaceCode = ReturnType<typeof createSpaceCode>;
