import { isLiveMemError, statusOf } from '../shared/errors.js';

type Result = Record<string, unknown>;
type Formatter = (result: Result) => string;

/**
 * Renders a command's result: the JSON itself with --json (the same shape the MCP tool returns),
 * else a text view for people. Every command goes through here.
 */
export function render(result: Result, options: { json?: boolean | undefined }, view: keyof typeof VIEWS = 'fields'): string {
  if (options.json) return `${JSON.stringify(result, null, 2)}\n`;
  const text = VIEWS[view](result);
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** An error as the user sees it: JSON on stdout with --json, else one line for stderr. */
export function renderError(error: unknown, options: { json?: boolean | undefined }): { stdout: string; stderr: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (options.json && isLiveMemError(error)) {
    return { stdout: `${JSON.stringify({ status: statusOf(error), code: error.code, message, ...error.data }, null, 2)}\n`, stderr: '' };
  }
  return { stdout: '', stderr: `live-mem: ${message}\n` };
}

const scalar = (value: unknown): string =>
  value === null || value === undefined ? '-' : Array.isArray(value) ? value.join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value);

const table = (rows: Array<Record<string, unknown>>, columns: string[]): string => {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => scalar(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
};

const fields: Formatter = (result) =>
  Object.entries(result)
    .filter(([key]) => key !== 'status')
    .map(([key, value]) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? `${key}:\n${Object.entries(value)
            .map(([k, v]) => `  ${k}: ${scalar(v)}`)
            .join('\n')}`
        : `${key}: ${scalar(value)}`,
    )
    .join('\n');

const notes: Formatter = (result) => {
  const list = (result.notes as Result[]) ?? [];
  const body = list
    .map(
      (note) =>
        `── ${scalar(note.timestamp)}  ${scalar(note.agent)}  [${scalar(note.category)}]${(note.tags as string[]).length ? `  #${(note.tags as string[]).join(' #')}` : ''}\n${String(note.content)}`,
    )
    .join('\n\n');
  const footer = `${list.length} note(s)${result.has_more ? ', more available (raise --limit)' : ''}`;
  return list.length ? `${body}\n\n${footer}` : footer;
};

const VIEWS = {
  fields,
  notes,
  spaces: (result: Result) => table((result.spaces as Result[]) ?? [], ['space_id', 'live_notes_count', 'bank_files_count', 'owner', 'description']),
  bankList: (result: Result) => table((result.files as Result[]) ?? [], ['filename', 'size', 'last_modified']),
  tokens: (result: Result) => table((result.tokens as Result[]) ?? [], ['name', 'hash_prefix', 'permissions', 'space_ids', 'state', 'expires_at']),
  backups: (result: Result) => table((result.backups as Result[]) ?? [], ['backup_id', 'files_count', 'total_size', 'description']),
  content: (result: Result) => String(result.content ?? result.rules ?? ''),
  bankAll: (result: Result) =>
    [
      ...((result.files as Result[]) ?? []).map((file) => `═══ ${scalar(file.filename)} ═══\n${String(file.content)}`),
      ...(result.truncated ? [`(truncated: ${scalar(result.omitted_files)} left out; read them with \`live-mem bank read\`)`] : []),
    ].join('\n\n') || '(the bank is empty)',
  hits: (result: Result) => {
    const list = (result.results as Result[]) ?? [];
    const body = list
      .map(
        (hit) =>
          `── ${scalar(hit.score)}  ${scalar(hit.source)}${hit.level === null ? '' : ` L${scalar(hit.level)}`}  ${scalar(hit.ref)}  ${scalar(hit.timestamp ?? hit.range_end ?? '')}\n${String(hit.text)}`,
      )
      .join('\n\n');
    return list.length ? `${body}\n\n${list.length} result(s)` : 'no result';
  },
  context: (result: Result) =>
    `${String(result.text ?? '')}\n(${scalar(result.tokens)} of ${scalar(result.max_tokens)} tokens; omitted: ${Object.entries((result.omitted as Result) ?? {})
      .map(([k, v]) => `${k} ${scalar(v)}`)
      .join(', ')})`,
  history: (result: Result) => table((result.consolidations as Result[]) ?? [], ['consolidation_id', 'committed_at', 'notes_count', 'by']),
  written: (result: Result) => `${scalar(result.status)}: ${scalar(result.filename ?? result.space_id)}`,
  summaries: (result: Result) => table((result.summaries as Result[]) ?? [], ['id', 'level', 'sealed', 'range_start', 'range_end', 'covers', 'chars']),
  summary: (result: Result) => {
    const summary = (result.summary as Result) ?? {};
    const covered = ((result.notes ?? result.children) as Result[]) ?? [];
    return [
      `── ${scalar(summary.id)}  L${scalar(summary.level)}  ${summary.sealed ? 'sealed' : 'open'}  ${scalar(summary.range_start)} → ${scalar(summary.range_end)}`,
      String(summary.summary ?? ''),
      ...['key_findings', 'topics', 'agents', 'files_mentioned'].flatMap((key) =>
        ((summary[key] as string[]) ?? []).length ? [`${key}: ${scalar(summary[key])}`] : [],
      ),
      `covers ${covered.length}: ${covered.map((item) => scalar(item.ref ?? item.id)).join(', ')}`,
    ].join('\n');
  },
} satisfies Record<string, Formatter>;
