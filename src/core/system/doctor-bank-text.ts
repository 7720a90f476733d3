import { hasForeignLineEndings } from '../../shared/line-endings.js';
import { readBankFiles } from '../bank/bank-files.js';
import { spaceKeys } from '../layout.js';
import { plural, type SpaceCheckDeps } from './doctor-space.js';
import type { Finding } from './doctor-space.js';

const failure = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The text of a space's Markdown — bank files, rules, synthesis — as doctor reads it once for two
 * checks: files past LIVE_MEM_BANK_FILE_MAX_BYTES (oversized), and line endings live-mem never
 * writes (lineEndings).
 */
export async function checkBankText(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { context } = deps;
  const keys = spaceKeys(spaceId);
  const [bank, rules, synthesis] = await Promise.all([readBankFiles(context, spaceId), context.storage.get(keys.rules), context.storage.get(keys.synthesis)]);
  const sizes = oversized(spaceId, context.limits.bankFileMaxBytes, [
    ...(synthesis ? [[keys.synthesis, synthesis.body.length] as const] : []),
    ...[...bank].map(([filename, file]) => [keys.bankFile(filename), Buffer.byteLength(file.content, 'utf8')] as const),
  ]);
  return [...sizes, ...(await lineEndings(deps, spaceId, bank, rules, synthesis))];
}

/**
 * Bank files (and the synthesis) past LIVE_MEM_BANK_FILE_MAX_BYTES, left by an older version, a
 * hand or a restored backup: every writer refuses to grow them, and each costs every consolidation
 * and search that reads it. Not fixable here: splitting a file is a decision about its content.
 */
function oversized(spaceId: string, maxBytes: number, files: ReadonlyArray<readonly [string, number]>): Finding[] {
  const over = files.filter(([, bytes]) => bytes > maxBytes).sort((a, b) => b[1] - a[1]);
  if (over.length === 0) return [];
  const list = over.slice(0, 5).map(([key, bytes]) => `${key} (${bytes} bytes)`);
  return [
    {
      check: 'bank-file-size',
      space_id: spaceId,
      status: 'warn',
      fixable: false,
      message: `${plural(over.length, 'file')} of '${spaceId}' larger than a bank file may grow (${maxBytes} bytes, LIVE_MEM_BANK_FILE_MAX_BYTES): ${list.join(', ')}${over.length > 5 ? ', …' : ''}`,
      hint: 'each may shrink but not grow: split it with bank_write (a file per topic), or raise LIVE_MEM_BANK_FILE_MAX_BYTES',
    },
  ];
}

/**
 * A space's Markdown with line endings other than `\n` (`\r\n`, `\r`, NEL, U+2028, U+2029) or a
 * byte-order mark: left by an older version, a hand, a planted file or a restored backup (every write
 * normalises them now, shared/line-endings.ts). The section model reads them, so nothing is wedged;
 * `fix` normalises them through a revision (each file's text before kept in history).
 */
async function lineEndings(
  deps: SpaceCheckDeps,
  spaceId: string,
  bank: Awaited<ReturnType<typeof readBankFiles>>,
  rules: { body: Buffer } | null,
  synthesis: { body: Buffer } | null,
): Promise<Finding[]> {
  const { caller, fix } = deps;
  const keys = spaceKeys(spaceId);
  const found = [
    ...(rules && hasForeignLineEndings(rules.body.toString('utf8')) ? [keys.rules] : []),
    ...(synthesis && hasForeignLineEndings(synthesis.body.toString('utf8')) ? [keys.synthesis] : []),
    ...[...bank]
      .filter(([, file]) => hasForeignLineEndings(file.content))
      .map(([filename]) => keys.bankFile(filename))
      .sort(),
  ];
  if (found.length === 0) return [];
  const list = `${found.slice(0, 5).join(', ')}${found.length > 5 ? ', …' : ''}`;
  const finding: Finding = {
    check: 'line-endings',
    space_id: spaceId,
    status: 'warn',
    fixable: true,
    fix: 'rewrites them with \\n line endings, as a revision (history keeps each file as it was)',
    message: `${plural(found.length, 'file')} of '${spaceId}' with \\r\\n or \\r line endings, Unicode line separators (NEL, U+2028, U+2029) or a byte-order mark, which live-mem never writes: ${list}`,
    hint: `consolidations read them as they are; \`live-mem doctor ${spaceId} --fix\` normalises them`,
  };
  if (!fix || !deps.normalizeLineEndings) return [finding];
  try {
    const done = await deps.normalizeLineEndings(caller, spaceId);
    const fixed = [...(done.rules ? [keys.rules] : []), ...(done.synthesis ? [keys.synthesis] : []), ...done.files.map((filename) => keys.bankFile(filename))];
    const by = done.revision_id ? ` (revision ${done.revision_id})` : '';
    return [
      {
        ...finding,
        status: 'ok',
        fixed: true,
        message: `normalised the line endings of ${plural(fixed.length, 'file')} of '${spaceId}': ${fixed.join(', ')}${by}`,
      },
    ];
  } catch (error) {
    return [{ ...finding, message: `${finding.message}; could not normalise them: ${failure(error)}` }];
  }
}
