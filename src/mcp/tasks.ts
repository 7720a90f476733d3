import type { McpServer } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import type { JobRecord } from '../core/jobs.js';
import { isLiveMemError } from '../shared/errors.js';
import { toolResult } from './result.js';
import type { RequestContext, ToolDefinition, ToolTask } from './tool.js';

/**
 * Long work as MCP tasks (the tasks extension of 2026-07-28, `io.modelcontextprotocol/tasks`). A tool
 * with a `task` (bank_consolidate, summaries_update) called by a client that declares the extension on
 * its request runs its work as the background job it already knows how to start, and the call answers
 * a task handle at once (`resultType: 'task'`). The task is that job: its record in the store is the
 * task's state, so any process or replica sharing the store answers `tasks/get` for it, and it is
 * durable before the handle is answered (the record is written before the job starts). A task id names
 * the tool, the space and the job (`bank_consolidate/proj/20261203T181000-ab12cd`); reading it needs the
 * same permission as the tool's status tool, checked by the core. The SDK's v2 packages have no server
 * side for tasks: these handlers are registered as custom methods.
 *
 * What the work cannot do as a task, it says: it asks the client nothing (no `input_required` status:
 * the client's own model is asked synchronously, in rounds of the call, before any task is made), and
 * `tasks/cancel` is acknowledged without stopping it — a consolidation commits window by window and a
 * window is never left half-done, so the task ends `completed` (the spec lets a server decline to stop).
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How often a client is asked to poll: jobs write their progress at most every second. */
const POLL_MS = 2_000;

type TaskStatus = 'working' | 'completed' | 'failed';

const taskIdOf = (tool: string, spaceId: string, jobId: string) => `${tool}/${spaceId}/${jobId}`;

/** The tool, space and job a task id names; -32602 for one this server did not give. */
function parseTaskId(
  taskId: string,
  tools: ReadonlyMap<string, ToolDefinition>,
): { tool: ToolDefinition & { task: ToolTask }; spaceId: string; jobId: string } {
  const [name = '', spaceId = '', jobId = '', ...rest] = taskId.split('/');
  const tool = tools.get(name);
  if (!tool?.task || spaceId === '' || jobId === '' || rest.length > 0)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown task ${JSON.stringify(taskId)}`);
  return { tool: tool as ToolDefinition & { task: ToolTask }, spaceId, jobId };
}

/** A job record as the task it is (DetailedTask): running is working; an ended job is completed with its tool result; an interrupted one failed. */
export function taskOf(taskId: string, record: JobRecord<unknown, unknown>): Record<string, unknown> {
  const base = { taskId, createdAt: record.started_at, lastUpdatedAt: record.updated_at, ttlMs: null, pollIntervalMs: POLL_MS };
  const progress = (record.progress as { message?: unknown } | null)?.message;
  const status: TaskStatus = record.state === 'running' ? 'working' : record.state === 'interrupted' ? 'failed' : 'completed';
  if (status === 'working') return { ...base, status, ...(typeof progress === 'string' ? { statusMessage: progress } : {}) };
  if (status === 'failed') {
    const message = `the process running it (${record.runner}) stopped before it ended; the next run finishes its work`;
    return { ...base, status, statusMessage: message, error: { code: ProtocolErrorCode.InternalError, message } };
  }
  const result = (record.result ?? { status: record.state }) as Record<string, unknown>;
  // The tools/call result the call would have answered, as 2026-07-28 frames it (resultType included).
  return { ...base, status, statusMessage: `${record.state}`, result: { ...toolResult(result), resultType: 'complete' } };
}

/** A CreateTaskResult: the handle of a task (a started job). */
export type CreatedTask = Record<string, unknown> & { resultType: 'task' };

/** The task handle a call answers once its job is started (`started`: the job's start result). */
export function createdTask(tool: string, started: { space_id: string; job_id: string; started_at: string }): CreatedTask {
  return {
    resultType: 'task',
    taskId: taskIdOf(tool, started.space_id, started.job_id),
    status: 'working',
    createdAt: started.started_at,
    lastUpdatedAt: started.started_at,
    ttlMs: null,
    pollIntervalMs: POLL_MS,
  };
}

/** Whether the client of a 2026-07-28 request declared the tasks extension on it. */
export const declaresTasks = (capabilities: { extensions?: Record<string, unknown> } | undefined): boolean =>
  capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;

/** Registers tasks/get, tasks/update and tasks/cancel on a 2026-07-28 instance. */
export function serveTasks(
  server: McpServer,
  tools: readonly ToolDefinition[],
  host: { core: Core; resolveCaller(ctx: RequestContext): Caller | Promise<Caller> },
): void {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const byId = { params: z.looseObject({ taskId: z.string() }) };
  /** The task's job as its caller may read it; an unknown job (or space) is an unknown task. */
  const find = async (taskId: string, ctx: RequestContext): Promise<JobRecord<unknown, unknown>> => {
    const { tool, spaceId, jobId } = parseTaskId(taskId, byName);
    const caller = await host.resolveCaller(ctx);
    let job: JobRecord<unknown, unknown> | null | undefined;
    try {
      [job] = (await tool.task.jobs(host.core).status(caller, { space_id: spaceId, job_id: jobId })).jobs;
    } catch (error) {
      if (isLiveMemError(error, 'not_found') || isLiveMemError(error, 'invalid_input'))
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown task ${JSON.stringify(taskId)}`);
      if (isLiveMemError(error)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
      throw error;
    }
    if (!job) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown task ${JSON.stringify(taskId)}`);
    return job;
  };
  server.server.setRequestHandler('tasks/get', byId, async (params, ctx) => taskOf(params.taskId, await find(params.taskId, ctx)));
  // Nothing is ever asked of the client (no input_required task): responses are for no outstanding key, and ignored.
  server.server.setRequestHandler('tasks/update', byId, async (params, ctx) => {
    await find(params.taskId, ctx);
    return {};
  });
  // Cooperative cancellation, declined: the work ends on its own, whole windows only.
  server.server.setRequestHandler('tasks/cancel', byId, async (params, ctx) => {
    await find(params.taskId, ctx);
    return {};
  });
}
