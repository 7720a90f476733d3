import { invalid } from '../../shared/errors.js';
import { isPlainFileName } from '../../shared/keys.js';
import { parseNoteName } from '../note-name.js';
import { quoteName } from '../validate.js';
import { FORGET_ID_SUFFIX } from '../commit/history-record.js';
import type { CommitKind } from '../commit/kind.js';
import { isObject, isStringOrNull, MAX_RECORD_NOTES, RECORD_ID, refuseField } from '../commit/pending.js';
import { applyForget } from './roll-forward.js';

/**
 * A person's forget as a kind of commit (commit/kind.ts): its record writes nothing but removes. It
 * names each note (a note file name) and the consolidation holding it (a history id, or null), says
 * who and why, and has no writes, synthesis or pre-images; roll-forward.ts rolls it forward.
 */
export const forgetCommit: CommitKind = {
  kind: 'forget',
  verify(record) {
    // Its id says what it is: every process finds forgets from a listing of history (commit/history-record.ts).
    if (!String(record.id).endsWith(FORGET_ID_SUFFIX)) throw invalid(`it is a forget, but its id ${JSON.stringify(record.id)} does not end in -forget`);
    const { forget } = record;
    if ((record.notes as unknown[]).length > 0 || (record.writes as unknown[]).length > 0 || record.synthesis !== undefined || record.preimages !== undefined)
      throw invalid('it is a forget, but it moves notes, writes files or keeps pre-images');
    if (!isObject(forget) || typeof forget.by !== 'string' || !isStringOrNull(forget.reason) || !Array.isArray(forget.notes) || forget.notes.length === 0)
      throw invalid('its forget (by, reason, notes) is malformed');
    if (forget.purge_backups !== undefined && typeof forget.purge_backups !== 'boolean') throw invalid('its purge_backups is no boolean');
    if (forget.notes.length > MAX_RECORD_NOTES) throw invalid('it forgets an endless list of notes');
    for (const note of forget.notes) {
      const filename = isObject(note) ? note.filename : undefined;
      if (typeof filename !== 'string' || !isPlainFileName(filename) || !parseNoteName(filename))
        throw invalid(`it forgets ${quoteName(filename)}, which is no note file name`);
      const cid = (note as Record<string, unknown>).consolidation_id;
      if (cid !== null && (typeof cid !== 'string' || !RECORD_ID.test(cid))) throw invalid(`it names ${JSON.stringify(cid)}, which is no history id`);
    }
    refuseField(record, ['rules', 'revision'], 'it changes the rules, which only a revision does');
    refuseField(record, ['provenance', 'dispositions'], 'it is a forget, but it cites notes');
    refuseField(record, ['retention'], 'it is a forget, but it has a retention check');
  },
  async rollForward(context, record) {
    await applyForget(context, record);
  },
};
