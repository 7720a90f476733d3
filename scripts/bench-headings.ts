/**
 * Section 22 of `npm run bench`: a bank file of 10,000 one-line headings (about 320 KB, nested two
 * and three deep), what once made a consolidation run past 300 s and a search 56 s (finding 11 of
 * issue 28: section ends were found in a time quadratic in the headings). In-process on fs:
 *   - each splitter of the Markdown section model on the file, median of 5: the outline
 *     (markdown/outline.ts), the search documents (markdown/sections.ts), compaction's
 *     sections, the consolidation's view of the file sent in part (bank-view.ts, ranked against 5
 *     notes), and one section edit; and the outline of a file of 40,000 headings beside it;
 *   - one consolidation of one note into a space holding the file (a scripted model appends to its
 *     last section): the time outside the model's call;
 *   - the first memory_search of a new core on that space (its index built, the file's 10,000
 *     sections included);
 *   - one bank_write of 2,000, 5,000 and 10,000 section edits (appends to one section, and adds under
 *     one parent) through the core on fs: what a red-team pass measured at 14 s for 2,000 and past 300 s
 *     for 5,000 (issue 39, each edit re-read the whole file); linear, 10,000 cost five times 2,000.
 */
import { ownerCaller } from '../src/core/caller.js';
import { splitSections } from '../src/core/compaction/sections.js';
import { viewBankFile } from '../src/core/consolidation/bank-view.js';
import { applySectionEdit } from '../src/core/markdown/edit.js';
import { outlineOf } from '../src/core/markdown/outline.js';
import { createCore } from '../src/core/core.js';
import { bankSections } from '../src/core/markdown/sections.js';
import { bm25Engine } from '../src/search/bm25.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { startScriptedLlm } from '../test/helpers/scripted-llm.js';
import { below, figure, freshHome, percentile, progress, timedModel, timeMs, type Figure } from './bench-lib.js';

const HEADINGS = 10_000;
/** Four times as many: linear, the outline takes about four times as long (quadratic, sixteen). */
const MORE_HEADINGS = 40_000;
const RUNS = 5;
/** Targets: a parse of the file well under a second; a consolidation or a first search within seconds, not minutes. */
const TARGET = { splitMs: 1_000, consolidationMs: 5_000, searchMs: 5_000 } as const;

/** `## Entry 00042: one line of the log`, every third one a level deeper. */
const headingsFile = (count = HEADINGS): string =>
  `# Log\n\n${Array.from({ length: count }, (_, i) => `${i % 3 === 2 ? '###' : '##'} Entry ${String(i).padStart(5, '0')}: one line of the log\n`).join('')}`;

const median = async (run: () => unknown): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await timeMs(async () => run()));
  return percentile(times, 50);
};

export async function benchHeadings(): Promise<Figure[]> {
  const file = headingsFile();
  const sections = outlineOf(file).headings.length;
  if (sections !== HEADINGS + 1 || bankSections('log.md', file).length !== HEADINGS + 1) throw new Error(`the file outlines to ${sections} headings`);
  const kib = Math.round(Buffer.byteLength(file) / 1024);
  progress(`  a file of ${HEADINGS.toLocaleString('en')} headings, ${kib} KiB`);
  const notes = Array.from({ length: 5 }, (_, i) => `Entry ${String(i * 1999).padStart(5, '0')} was revisited: one line of the log changed.`);
  const last = `Entry ${String(HEADINGS - 1).padStart(5, '0')}: one line of the log`;

  const split = {
    outline: await median(() => outlineOf(file)),
    documents: await median(() => bankSections('log.md', file)),
    compaction: await median(() => splitSections('log.md', file, 2_000)),
    view: await median(() => viewBankFile('log.md', file, 2_000, notes, bm25Engine)),
    edit: await median(() => applySectionEdit(file, { op: 'append', path: ['Log', last], content: '- one more line' }, 'log.md')),
  };
  const more = headingsFile(MORE_HEADINGS);
  const outlineMore = await median(() => outlineOf(more));

  // One consolidation into a space holding the file, then a new core's first search of it.
  const home = await freshHome('headings');
  const caller = ownerCaller('bench');
  const reply = JSON.stringify({
    files: [{ filename: 'log.md', action: 'edit', edits: [{ op: 'append', section: `Log > ${last}`, content: '- consolidated' }] }],
    synthesis: 'A long log.',
  });
  const server = await startScriptedLlm([{ reply }]);
  let consolidationMs: number;
  try {
    const llm = timedModel(server.client({ contextWindow: 1_000_000, maxTokens: 4_000 }));
    const core = createCore({ storage: createFsDriver(home), llm });
    await core.spaces.create(caller, { space_id: 'headings' });
    await createFsDriver(home).put('headings/bank/log.md', file);
    await core.notes.write(caller, { space_id: 'headings', category: 'progress', content: notes[0] as string });
    const start = performance.now();
    const result = await core.consolidation.consolidate(caller, { space_id: 'headings' });
    consolidationMs = performance.now() - start - llm.spentMs;
    if (result.status !== 'ok' || result.operations_applied !== 1) throw new Error(`unexpected consolidation result: ${result.message}`);
    await core.idle();
  } finally {
    await server.close();
  }
  const searcher = createCore({ storage: createFsDriver(home) });
  let hits = 0;
  const searchMs = await timeMs(async () => {
    hits = (await searcher.recall.search(caller, { space_id: 'headings', query: 'entry 04242', limit: 5 })).results.length;
  });
  if (hits === 0) throw new Error('the first search found nothing');
  await searcher.idle();

  const edits = await benchEditCounts();
  const label = `${HEADINGS.toLocaleString('en')} headings, ${kib} KiB`;
  return [
    figure('headings_outline_ms', `outline of a bank file of ${label} (median of ${RUNS})`, split.outline, 'ms', below(TARGET.splitMs)),
    figure('headings_search_documents_ms', '  its search documents (a section each)', split.documents, 'ms', below(TARGET.splitMs)),
    figure('headings_compaction_sections_ms', '  its compaction sections', split.compaction, 'ms', below(TARGET.splitMs)),
    figure('headings_consolidation_view_ms', '  its consolidation view (sent in part, ranked against 5 notes)', split.view, 'ms', below(TARGET.splitMs)),
    figure(
      'headings_outline_40k_ms',
      `  the outline of a file of ${MORE_HEADINGS.toLocaleString('en')} headings`,
      outlineMore,
      'ms',
      below(TARGET.splitMs * 4),
    ),
    figure('headings_outline_growth', '  growth for 4x the headings (4 when linear, 16 when quadratic)', outlineMore / split.outline, 'x', below(8)),
    figure('headings_section_edit_ms', '  one section edit (append to the last section)', split.edit, 'ms', below(TARGET.splitMs)),
    figure('headings_consolidation_ms', '  a consolidation of one note into it, outside the model, fs', consolidationMs, 'ms', below(TARGET.consolidationMs)),
    figure('headings_first_search_ms', '  the first memory_search of a new core (index built)', searchMs, 'ms', below(TARGET.searchMs)),
    ...edits,
  ];
}

const EDIT_COUNTS = [2_000, 5_000, 10_000] as const;

/** One bank_write of N edits of one kind, through the core on fs (the commit included), for each N. */
async function benchEditCounts(): Promise<Figure[]> {
  const home = await freshHome('edits');
  const caller = ownerCaller('bench');
  const core = createCore({ storage: createFsDriver(home), summaries: { auto: false }, compaction: { auto: false } });
  const figures: Figure[] = [];
  for (const op of ['append', 'add'] as const) {
    const ms: number[] = [];
    for (const count of EDIT_COUNTS) {
      const space = `${op}-${count}`;
      await core.spaces.create(caller, { space_id: space });
      await createFsDriver(home).put(`${space}/bank/journal.md`, '# Journal\n\n## Log\n\n- started\n');
      const { version } = await core.bank.read(caller, { space_id: space, filename: 'journal.md' });
      const edits = Array.from({ length: count }, (_, i) =>
        op === 'append' ? { op, section: 'Log', content: `- entry ${i}` } : { op, section: 'Journal', title: `Day ${i}`, content: '-' },
      );
      progress(`  a bank_write of ${count.toLocaleString('en')} ${op} edits`);
      ms.push(await timeMs(async () => core.revisions.write(caller, { space_id: space, filename: 'journal.md', edits, if_match: version })));
    }
    for (const [i, count] of EDIT_COUNTS.entries()) {
      figures.push(
        figure(
          `bank_write_${op}_${count}_ms`,
          `one bank_write of ${count.toLocaleString('en')} ${op} edits (fs, commit included)`,
          ms[i] as number,
          'ms',
          below(5_000),
        ),
      );
    }
    figures.push(
      figure(
        `bank_write_${op}_growth`,
        `  growth from 2,000 to 10,000 ${op} edits (5 when linear, 25 when quadratic)`,
        (ms[2] as number) / (ms[0] as number),
        'x',
        below(10),
      ),
    );
  }
  await core.idle();
  return figures;
}
