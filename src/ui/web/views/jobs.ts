import { callTool, type Result } from '../api.js';
import { count, h, scrollBox, time } from '../dom.js';
import { errorBox, empty, spaceHeader, type ViewContext } from './common.js';

type Job = Record<string, unknown> & { job_id: string; state: string };

const REFRESH_MS = 2000;

function progressOf(job: Job): Node {
  const progress = job.progress as { notes_done?: number; notes_total?: number; message?: string; done?: number; total?: number } | undefined;
  if (!progress) return h('span', { class: 'muted' }, '—');
  const done = progress.notes_done ?? progress.done ?? 0;
  const total = progress.notes_total ?? progress.total ?? 0;
  return h(
    'span',
    {},
    total > 0 ? h('progress', { max: total, value: done }) : null,
    ` ${count(done)}/${count(total)} `,
    h('span', { class: 'muted' }, progress.message ?? ''),
  );
}

function jobRow(kind: string, job: Job): HTMLElement {
  const result = (job.result ?? {}) as Record<string, unknown>;
  return h(
    'tr',
    { 'data-job': job.job_id, 'data-state': job.state },
    h('td', {}, kind),
    h('td', {}, job.job_id),
    h('td', {}, h('span', { class: `state state-${/^[a-z]+$/.test(job.state) ? job.state : 'other'}` }, job.state)),
    h('td', {}, time(job.started_at)),
    h('td', {}, time(job.updated_at)),
    h(
      'td',
      {},
      job.state === 'running'
        ? progressOf(job)
        : String(result.message ?? (result.notes_processed !== undefined ? `${String(result.notes_processed)} notes` : '')),
    ),
  );
}

/**
 * #/space/{id}/jobs: background consolidations and the newest summaries run, with their progress,
 * refreshed while one runs. A caller with write may start a consolidation, after confirming.
 */
export async function jobsView(context: ViewContext): Promise<Node> {
  const spaceId = context.parts[0] as string;
  const table = h('div');
  const problem = h('div');
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  context.onLeave(() => {
    stopped = true;
    clearTimeout(timer);
  });

  const refresh = async () => {
    const [consolidations, summaries] = await Promise.all([
      callTool<Result & { jobs: Job[] }>('bank_consolidation_status', { space_id: spaceId }),
      callTool<Result & { last_job?: Job }>('summaries_list', { space_id: spaceId, level: 1 }),
    ]);
    const rows = [...consolidations.jobs.map((job) => jobRow('consolidation', job)), ...(summaries.last_job ? [jobRow('summaries', summaries.last_job)] : [])];
    table.replaceChildren(
      rows.length === 0
        ? empty('No background job has run in this space.')
        : scrollBox(
            h(
              'table',
              { class: 'jobs' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  h('th', {}, 'Kind'),
                  h('th', {}, 'Job'),
                  h('th', {}, 'State'),
                  h('th', {}, 'Started'),
                  h('th', {}, 'Updated'),
                  h('th', {}, 'Progress / result'),
                ),
              ),
              h('tbody', {}, ...rows),
            ),
          ),
    );
    const running = [...consolidations.jobs, ...(summaries.last_job ? [summaries.last_job] : [])].some((job) => job.state === 'running');
    if (running && !stopped) timer = setTimeout(() => void refresh().catch((error: unknown) => problem.replaceChildren(errorBox(error))), REFRESH_MS);
  };
  await refresh();

  const canWrite = context.whoami.permissions.includes('write') || context.whoami.permissions.includes('admin');
  const control = !canWrite ? null : context.modelConfigured ? await consolidateControl(spaceId, refresh, problem) : noModel();
  return h('section', {}, spaceHeader(spaceId, 'jobs'), control, problem, table);
}

/**
 * No model in the server: a consolidation from here could only fail (the page cannot lend one by
 * MCP sampling, as an agent's client may). The button stays, disabled, with what to set.
 */
function noModel(): Node {
  return h(
    'div',
    { class: 'consolidate' },
    h('button', { type: 'button', class: 'consolidate-start', disabled: true, 'aria-describedby': 'no-model' }, 'Consolidate now…'),
    h(
      'p',
      { id: 'no-model', class: 'muted no-model' },
      'No model is configured, so this server cannot consolidate. Set ',
      h('code', {}, 'LIVE_MEM_LLM_BASE_URL'),
      ' and ',
      h('code', {}, 'LIVE_MEM_LLM_MODEL'),
      ' (and ',
      h('code', {}, 'LIVE_MEM_LLM_API_KEY'),
      ' if the endpoint needs one; any OpenAI-compatible endpoint: OpenAI, Ollama, vLLM, LM Studio…) where live-mem runs, then start it again. ' +
        'Agents whose client offers MCP sampling can still consolidate with ',
      h('code', {}, 'bank_consolidate'),
      '.',
    ),
  );
}

/** Starting a consolidation: a button, then an explicit confirmation saying how many notes it folds. */
async function consolidateControl(spaceId: string, refresh: () => Promise<void>, problem: HTMLElement): Promise<Node> {
  const info = await callTool<Result & { live: { notes_count: number } }>('space_info', { space_id: spaceId });
  const box = h('div', { class: 'consolidate' });
  const ask = () => {
    box.replaceChildren(
      h('span', {}, `Fold the ${count(info.live.notes_count)} live notes into the memory bank with the configured model?`),
      h('button', { type: 'button', class: 'confirm', onclick: () => void start() }, 'Yes, consolidate'),
      h('button', { type: 'button', class: 'cancel', onclick: () => idle() }, 'Cancel'),
    );
  };
  const idle = () => box.replaceChildren(h('button', { type: 'button', class: 'consolidate-start', onclick: ask }, 'Consolidate now…'));
  const start = async () => {
    box.replaceChildren(h('span', { class: 'muted' }, 'Starting…'));
    try {
      const result = await callTool('bank_consolidate', { space_id: spaceId, background: true });
      box.replaceChildren(h('span', { class: 'started' }, `Started job ${String(result.job_id ?? '')}`));
      problem.replaceChildren();
      await refresh();
    } catch (error) {
      problem.replaceChildren(errorBox(error));
      idle();
    }
  };
  idle();
  return box;
}
