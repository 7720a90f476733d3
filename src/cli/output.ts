import { forTerminal, jsonForTerminal } from './terminal.js';
import { compactionRetention, retentionBlock, retentionVerdict } from './retention-view.js';

type Result = Record<string, unknown>;
type Formatter = (result: Result) => string;

/**
 * Renders a command's result: the JSON itself with --json (the same shape the MCP tool returns),
 * else a text view for people, with the store's control characters made visible (forTerminal).
 * Every command goes through here.
 */
export function render(result: Result, options: { json?: boolean | undefined }, view: keyof typeof VIEWS = 'fields'): string {
  if (options.json) return jsonForTerminal(result);
  const text = forTerminal(VIEWS[view](result));
  return text.endsWith('\n') ? text : `${text}\n`;
}

const scalar = (value: unknown): string =>
  value === null || value === undefined
    ? '-'
    : Array.isArray(value)
      ? value.map(scalar).join(', ')
      : typeof value === 'object'
        ? Object.entries(value)
            .map(([k, v]) => `${k} ${scalar(v)}`)
            .join(', ')
        : String(value);

/**
 * A work package (consolidate --prepare) as a person pastes it into any model's window: the
 * instructions, the prompt, the plan's schema; then, on stderr's side of the page, how to submit.
 */
const workPackage = (result: Result): string =>
  [
    String(result.instructions),
    '',
    String(result.prompt),
    '',
    "The plan's JSON schema:",
    JSON.stringify(result.plan_schema),
    '',
    `--- handle ${scalar(result.handle)} · ${scalar(result.notes_in_window)} notes in this window, ${scalar(result.notes_waiting)} more waiting · about ${scalar(result.package_tokens)} tokens · valid until ${scalar(result.expires_at)}`,
    `--- submit the plan: live-mem consolidate ${scalar(result.space_id)} --handle ${scalar(result.handle)} --plan plan.json (or --plan - to read it from stdin)`,
  ].join('\n');

const isRecord = (value: unknown): value is Result => typeof value === 'object' && value !== null && !Array.isArray(value);

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

/** One line per field; an object's fields indented below it, a list of objects one line per item (`summaries update`'s levels). */
const fields: Formatter = (result) =>
  Object.entries(result)
    .filter(([key]) => key !== 'status')
    .map(([key, value]) =>
      isRecord(value)
        ? `${key}:\n${Object.entries(value)
            .map(([k, v]) => `  ${k}: ${scalar(v)}`)
            .join('\n')}`
        : Array.isArray(value) && value.length > 0 && value.every(isRecord)
          ? `${key}:\n${value.map((item) => `  - ${scalar(item)}`).join('\n')}`
          : `${key}: ${scalar(value)}`,
    )
    .join('\n');

const count = (value: unknown): string => (typeof value === 'number' ? value.toLocaleString('en-US') : '-');

/** "1,234 / 4,000 tokens", marked when over: a size against its budget. */
const againstBudget = (item: Result): string =>
  `${count(item.tokens ?? item.total_tokens)} / ${count(item.budget_tokens)} tokens${item.over_budget ? '  OVER BUDGET' : ''}`;

/** The bank block of space info / summary: the bank's size, then each file's, against their budgets. */
const spaceFields: Formatter = (result) => {
  const bank = result.bank as Result | undefined;
  if (!bank || typeof bank !== 'object') return fields(result);
  const files = ((bank.file_budgets as Result[]) ?? []).map((file) => [scalar(file.filename), againstBudget(file)] as const);
  const width = Math.max(0, ...files.map(([name]) => name.length));
  const block = [
    `bank: ${count(bank.files_count)} file(s), ${count(bank.total_size)} bytes, ${againstBudget(bank)}`,
    ...files.map(([name, use]) => `  ${name.padEnd(width)}  ${use}`),
  ].join('\n');
  return Object.entries(result)
    .filter(([key]) => key !== 'status')
    .map(([key, value]) => (key === 'bank' ? block : fields({ [key]: value })))
    .join('\n');
};

const notes: Formatter = (result) => {
  const list = (result.notes as Result[]) ?? [];
  const body = list
    .map(
      (note) =>
        `── ${scalar(note.timestamp)}  ${scalar(note.agent)}  [${scalar(note.category)}]${(note.tags as string[]).length ? `  #${(note.tags as string[]).join(' #')}` : ''}${note.disposition ? `\n   ${String(note.disposition)}` : ''}\n${String(note.content)}`,
    )
    .join('\n\n');
  const footer = `${list.length} note(s)${result.has_more ? ', more available (raise --limit)' : ''}`;
  return list.length ? `${body}\n\n${footer}` : footer;
};

/** A consolidation's notes, each with what became of it (consolidation/provenance.ts) and what the bank kept of it (core/retention), when its record says. */
const withDispositions = (result: Result, record: Result): Result[] => {
  const dispositions = new Map(((record.dispositions as Result[] | undefined) ?? []).map((d) => [String(d.note), d]));
  // A note the bank kept whole is the norm: only a note that lost facts says so.
  const retention = new Map(((record.retention as Result[] | undefined) ?? []).filter((r) => r.status !== 'retained').map((r) => [String(r.note), r]));
  return ((result.notes as Result[]) ?? []).map((note) => {
    const d = dispositions.get(String(note.filename));
    const r = retention.get(String(note.filename));
    if (!d && !r) return note;
    let fate = '→';
    if (d) {
      const detail =
        d.status === 'integrated' ? ((d.into as string[]) ?? []).join('; ') : d.status === 'superseded' ? `by ${scalar(d.by ?? '?')}` : (d.reason ?? '');
      fate = `→ ${scalar(d.status)}${detail ? `: ${String(detail)}` : ''}`;
    }
    return { ...note, disposition: `${fate}${r ? ` · ${retentionVerdict(r)}` : ''}` };
  });
};

/** What a write kept out of the store (redact/redact.ts): the kinds of secrets masked, the <private> spans removed. */
const keptOut = (result: Result): string => {
  const redacted = Array.isArray(result.redacted) ? (result.redacted as Result[]) : [];
  const parts = [
    ...(redacted.length > 0 ? [`secrets masked: ${redacted.map((r) => `${scalar(r.kind)} ×${scalar(r.count)}`).join(', ')}`] : []),
    ...(typeof result.private_removed === 'number' && result.private_removed > 0 ? [`${result.private_removed} <private> span(s) not stored`] : []),
  ];
  return parts.length > 0 ? `\n(${parts.join('; ')})` : '';
};

/** A forget's receipt (core/forget): what went (or would go) from where, what may still hold the notes. */
const forgetReceipt: Formatter = (result) => {
  const list = (key: string) => (Array.isArray(result[key]) ? (result[key] as Result[]) : []);
  const line = (label: string, items: unknown[]) => `  ${label}: ${items.length > 0 ? items.map((item) => scalar(item)).join(', ') : 'none'}`;
  const verb = result.dry_run ? 'would be removed from' : 'removed from';
  return [
    result.dry_run
      ? `DRY RUN, nothing changed: ${scalar(result.notes_count)} note(s) would be forgotten (--yes to forget them)`
      : `forgot ${scalar(result.notes_count)} note(s) · forget ${scalar(result.forget_id)}`,
    ...list('notes').map((note) => `  ${scalar(note.filename)}  ${note.consolidation_id ? `consolidated by ${scalar(note.consolidation_id)}` : 'live'}`),
    `${verb}:`,
    line('live/', list('live') as unknown[]),
    ...list('history').map((entry) => `  ${scalar(entry.file)}: ${scalar(entry.notes)}`),
    line('search index (and vectors), every process', list('index_documents') as unknown[]),
    line('index snapshots', list('snapshots') as unknown[]),
    line(
      'summaries',
      list('summaries').map((summary) => summary.id),
    ),
    line('copies of the synthesis in consolidation records', list('synthesis_copies') as unknown[]),
    line('text of background job records', list('jobs') as unknown[]),
    line('pending records set aside', list('quarantined') as unknown[]),
    line('temp files of killed writers', list('temp_files') as unknown[]),
    'bank files that may derive from them (review with `live-mem bank read`, correct with `live-mem bank write`):',
    ...(list('bank_review').length > 0 ? list('bank_review').map((entry) => `  ${scalar(entry.consolidation_id)}: ${scalar(entry.bank_files)}`) : ['  none']),
    `still quoting them, not rewritten (correct with \`live-mem bank write … --secret\`, the synthesis as _synthesis.md):`,
    ...(list('text_hits').length > 0
      ? list('text_hits').map(
          (hit) =>
            `  ${hit.where === 'bank_history' ? `earlier text of ${scalar(hit.file)} in ${scalar(hit.consolidation_id)}` : scalar(hit.file)}: line(s) ${scalar(hit.lines)}`,
        )
      : ['  none']),
    `backups: ${scalar(result.backups_note)}`,
    ...list('backups').map((backup) => `  ${scalar(backup.backup_id)}: ${scalar(backup.holds)}`),
    ...(Array.isArray(result.backups_purged)
      ? (result.backups_purged as Result[]).map(
          (backup) => `  ${scalar(backup.backup_id)}: removed ${scalar(backup.removed)}; rewritten ${scalar(backup.rewritten)}`,
        )
      : []),
  ].join('\n');
};

const VIEWS = {
  fields,
  /** A consolidation's metrics, then what its retention check found (core/retention). */
  consolidation: (result: Result) => {
    if (typeof result.prompt === 'string') return workPackage(result);
    const { retention, ...rest } = result;
    return [fields(rest), ...retentionBlock(retention)].join('\n');
  },
  notes,
  /** The anchors of a space's notes in this checkout (live-mem anchors). */
  anchors: (result: Result) => `checkout: ${scalar(result.checkout)}\n\n${table((result.anchors as Result[]) ?? [], ['where', 'cites', 'state', 'detail'])}`,
  spaces: (result: Result) => {
    const spaces = (result.spaces as Result[]) ?? [];
    const columns = ['space_id', 'live_notes_count', 'bank_files_count', 'owner', 'description'];
    return table(spaces, spaces.some((space) => space.error) ? [...columns, 'error'] : columns);
  },
  spaceFields,
  bankList: (result: Result) => {
    const files = ((result.files as Result[]) ?? []).map((file) => ({ ...file, tokens: againstBudget(file) }));
    const total = files.length > 0 ? `\n\nbank: ${againstBudget(result)}` : '';
    return table(files, ['filename', 'size', 'tokens', 'last_modified']) + total;
  },
  tokens: (result: Result) =>
    table((result.tokens as Result[]) ?? [], ['name', 'hash_prefix', 'permissions', 'space_ids', 'state', 'expires_at']) +
    (Array.isArray(result.scope) ? `\n(only the tokens within spaces ${result.scope.join(', ')}: this admin token is limited to them)` : ''),
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
          `── ${scalar(hit.score)}  ${scalar(hit.source)}${hit.level === null ? '' : ` L${scalar(hit.level)}`}  ${scalar(hit.ref)}  ${hit.superseded_at ? `earlier version, replaced ${scalar(hit.superseded_at)} by ${scalar(hit.compaction_id)}` : scalar(hit.timestamp ?? hit.range_end ?? '')}\n${String(hit.text)}` +
          (Array.isArray(hit.sources) ? `\n   (from ${hit.sources.join(', ')})` : '') +
          (hit.retention ? `\n   (its consolidation: ${retentionVerdict(hit.retention as Result)})` : ''),
      )
      .join('\n\n');
    return list.length ? `${body}\n\n${list.length} result(s)` : 'no result';
  },
  context: (result: Result) =>
    `${String(result.text ?? '')}\n(${scalar(result.tokens)} of ${scalar(result.max_tokens)} tokens; omitted: ${Object.entries((result.omitted as Result) ?? {})
      .map(([k, v]) => `${k} ${scalar(v)}`)
      .join(', ')})`,
  compaction: (result: Result) =>
    [
      table((result.files as Result[]) ?? [], ['filename', 'tokens_before', 'tokens_after', 'budget_tokens', 'sections_digested']),
      ...compactionRetention(result.files),
      `${scalar(result.status)}${result.dry_run ? ' (dry run)' : ''}${result.compaction_id ? ` · compaction ${scalar(result.compaction_id)}` : ''}${result.message ? ` · ${String(result.message)}` : ''}`,
    ].join('\n'),
  history: (result: Result) =>
    table(
      ((result.consolidations as Result[]) ?? []).map((entry) => ({
        ...entry,
        kind: entry.kind === 'revision' ? `revision (${scalar(entry.action)})` : (entry.kind ?? 'consolidation'),
        // A compaction or a revision moved no note: what it holds is the earlier text of what it rewrote; a forget holds nothing.
        holds:
          entry.kind === 'consolidation' || entry.kind === undefined
            ? `${scalar(entry.notes_count)} note(s)`
            : entry.kind === 'forget'
              ? `${scalar(entry.notes_count)} note(s) forgotten`
              : `${scalar(entry.preimages_count)} pre-image(s)`,
        files: ((entry.bank_files as Result[]) ?? []).map((file) => file.filename),
        why: entry.reason ?? '',
      })),
      // `why` is a person's reason: a column only when a revision is listed.
      [
        'consolidation_id',
        'kind',
        'committed_at',
        'holds',
        'files',
        'by',
        ...(((result.consolidations as Result[]) ?? []).some((entry) => entry.kind === 'revision') ? ['why'] : []),
      ],
    ),
  historyEntry: (result: Result) => {
    const preimages = (result.preimages as Result[]) ?? [];
    const record = (result.consolidation as Result | undefined) ?? {};
    if (record.kind === 'forget') {
      const info = (record.forget as Result | undefined) ?? {};
      return `forget ${scalar(record.id)} by ${scalar(info.by)}${info.reason ? ` (${scalar(info.reason)})` : ''}: ${scalar(info.notes_count)} note(s) removed for good, from ${scalar(info.consolidations)}`;
    }
    if (record.kind !== 'compaction' && record.kind !== 'revision') return notes({ ...result, notes: withDispositions(result, record) });
    const what = record.kind === 'revision' ? 'revision' : 'compaction';
    const body = preimages.map(
      (section) =>
        `── ${[section.filename, ...((section.path as string[]).length > 0 ? [(section.path as string[]).join(' > ')] : [])].join('#')} (before ${what})\n${String(section.content)}`,
    );
    const revision = (record.revision as Result | undefined) ?? {};
    const rules = revision.rules as Result | undefined;
    if (rules) body.push(`── the rules (before this revision)\n${String(rules.before)}`);
    const about =
      record.kind === 'revision'
        ? `revision ${scalar(record.id)}: ${scalar(revision.action)} by ${scalar(revision.by)}${revision.reason ? ` (${scalar(revision.reason)})` : ''}${revision.reverts ? `, reverting ${scalar(revision.reverts)}` : ''}; ${preimages.length} file(s) as they were`
        : `${preimages.length} pre-image(s): the sections compaction ${scalar(record.id)} rewrote, as they were`;
    return [...body, about].join('\n\n');
  },
  explain: (result: Result) => {
    const list = (result.notes as Result[]) ?? [];
    const body = list.map(
      (note) =>
        `── ${scalar(note.timestamp)}  ${scalar(note.agent)}  ${scalar(note.filename)}\n   consolidation ${scalar(note.consolidation_id)} → ${((note.sections as string[]) ?? []).map((s) => s || '(whole file)').join('; ')}${note.retention && (note.retention as Result).status !== 'retained' ? ` · ${retentionVerdict(note.retention as Result)}` : ''}\n${note.content === null ? '(no longer in history)' : String(note.content)}`,
    );
    const what = `${scalar(result.filename)}${result.section ? `#${scalar(result.section)}` : ''}`;
    if (list.length === 0) return `no consolidation cites notes for ${what}`;
    return `${body.join('\n\n')}\n\n${list.length} of ${scalar(result.total)} source note(s) of ${what}, newest first${result.has_more ? ' (raise --limit)' : ''}`;
  },
  forget: (result: Result) => forgetReceipt(result),
  written: (result: Result) =>
    `${scalar(result.status)}: ${scalar(result.filename ?? result.space_id)}` +
    (result.space_created === true ? `\n(new space '${scalar(result.space_id)}' created with the default rules)` : '') +
    keptOut(result),
  ingest: (result: Result) => {
    const range = (result.time_range as Result | undefined) ?? {};
    const head = result.dry_run
      ? `DRY RUN, nothing written: ${count(result.would_write)} note(s) would be written, ${count(result.already_present)} already present`
      : `${count(result.written)} written, ${count(result.already_present)} already present`;
    const first = ((result.first as Result[]) ?? []).map(
      (note) => `  ${scalar(note.timestamp)}  ${scalar(note.agent)}  [${scalar(note.category)}]  ${String(note.content).replace(/\s+/g, ' ').slice(0, 80)}`,
    );
    return (
      [
        `${head}${result.forgotten ? `, ${count(result.forgotten)} forgotten (not written again)` : ''} · ${scalar(result.entries)} entries · ${scalar(result.space_id)}`,
        ...(range.oldest ? [`from ${scalar(range.oldest)} to ${scalar(range.newest)} · agents: ${scalar(result.agents)}`] : []),
        ...(first.length > 0 ? [`${result.dry_run ? 'first to write' : 'first written'}:`, ...first] : []),
        ...(result.would_create_space ? [`(space '${scalar(result.space_id)}' does not exist: it would be created with the default rules)`] : []),
        ...(result.space_created ? [`(new space '${scalar(result.space_id)}' created with the default rules)`] : []),
      ].join('\n') + keptOut(result)
    );
  },
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
  spend: (result: Result) => {
    const total = (result.total as Result) ?? {};
    const purposes = Object.entries((total.by_purpose as Record<string, Result>) ?? {}).map(([purpose, figures]) => ({ purpose, ...figures }));
    const cap = result.daily_cap as Result | null;
    return [
      `${scalar(result.space_id)}: model tokens from ${scalar(result.since)} to ${scalar(result.until)} (UTC days)`,
      table(
        [...purposes, ...(purposes.length > 0 ? [{ purpose: 'total', ...total }] : [])],
        ['purpose', 'calls', 'prompt_tokens', 'completion_tokens', 'tokens'],
      ),
      table((result.days as Result[]) ?? [], ['day', 'calls', 'prompt_tokens', 'completion_tokens', 'tokens']),
      cap
        ? `daily cap: ${cap.tokens === 0 ? 'none' : `${scalar(cap.tokens)} tokens`}: ${scalar(cap.why)}${
            cap.search_tokens !== undefined ? `\n  of it, query embeddings of searches may use ${scalar(cap.search_tokens)}` : ''
          }`
        : 'daily cap: none',
    ].join('\n\n');
  },
  /** Each file and what happened to it (or, with --print, what it would hold), then what to do next. */
  setup: (result: Result) =>
    [
      ...(result.client !== undefined
        ? [
            `${scalar(result.client)}: server "${scalar(result.server)}" ${
              result.connects !== undefined
                ? `connects to ${scalar(result.connects)}${result.launches !== undefined ? ` through ${scalar(result.launches)}` : ''}`
                : `launches ${scalar(result.launches)}`
            }`,
          ]
        : [`model: ${scalar(result.model)} at ${scalar(result.base_url)}`]),
      ...(result.env !== undefined && Object.keys(result.env as Record<string, string>).length > 0
        ? [
            `  env: ${Object.entries(result.env as Record<string, string>)
              .map(([key, value]) => `${key}=${value}`)
              .join(' ')}`,
          ]
        : []),
      ...((result.notes as string[]) ?? []).map((note) => `  ${note}`),
      ...((result.files as Result[]) ?? []).map(
        (file) =>
          `${scalar(file.kind)} ${scalar(file.file)}: ${scalar(file.action)}${file.backup ? ` (backup: ${scalar(file.backup)})` : ''}${
            typeof file.content === 'string' ? `\n\n${file.content}` : ''
          }`,
      ),
      scalar(result.message),
    ].join('\n'),
  doctor: (result: Result) => {
    const marks: Record<string, string> = { ok: '✓', warn: '!', error: '✗' };
    const lines = ((result.findings as Result[]) ?? []).map((finding) => {
      const line = `${marks[String(finding.status)] ?? '?'} ${scalar(finding.check)}: ${String(finding.message)}${finding.fixed ? ' (fixed)' : ''}`;
      if (finding.status === 'ok') return line;
      const todo = [finding.fixable && !result.fix ? `--fix ${String(finding.fix)}` : '', String(finding.hint ?? '')].filter(Boolean);
      return todo.length > 0 ? `${line}\n    → ${todo.join('; ')}` : line;
    });
    const counts = (result.counts as Record<string, number>) ?? {};
    const tally = [
      `${counts.ok ?? 0} ok`,
      `${counts.warn ?? 0} warning(s)`,
      `${counts.error ?? 0} error(s)`,
      ...(counts.fixed ? [`${counts.fixed} fixed`] : []),
    ];
    const next =
      !result.fix && counts.fixable ? ` — \`live-mem doctor${result.space_id ? ` ${scalar(result.space_id)}` : ''} --fix\` repairs ${counts.fixable}` : '';
    return `${lines.join('\n')}\n\n${scalar(result.store)}: ${tally.join(', ')}${next}`;
  },
} satisfies Record<string, Formatter>;
