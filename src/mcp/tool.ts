import type { ToolAnnotations, ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Caller } from '../core/caller.js';
import type { ProgressEvent } from '../core/consolidation/consolidation-service.js';
import type { BacklogReach } from '../core/backlog.js';
import type { Core } from '../core/core.js';
import type { Checkout } from '../shared/checkout.js';
import type { JobRecord } from '../core/jobs.js';
import type { LlmClient } from '../llm/types.js';
import { invalid, isLiveMemError } from '../shared/errors.js';
import { situationOf } from '../shared/hints.js';
import { type DefaultSpace, type DefaultSpaces, noDefaultSpace } from './default-space.js';
import { projectArgument, projectSpaceId } from './schemas.js';

/** The SDK's context of the MCP request being answered (its id, signal, `_meta`, the HTTP request's auth). */
export type RequestContext = ServerContext;

/** What a tool's handler gets: the core, who is calling, and the MCP request context. */
export interface ToolContext {
  core: Core;
  caller: Caller;
  ctx: RequestContext;
  /**
   * The connected client's model, when no endpoint is configured and the client declares sampling
   * (pushed sampling requests in 2025, input_required rounds in 2026-07-28); else undefined. Work
   * started in the `background` outlives the request: a 2026-07-28 client's model cannot serve it.
   */
  clientModel(use?: { background?: boolean }): LlmClient | undefined;
  /** Sends an MCP progress notification when the request asked for progress. */
  reportProgress(event: ProgressEvent): void;
  /** The tools this server offers: a profile name (or `custom`) and how many. */
  tools: { profile: string; count: number };
  /** The space of a call whose `projectSpaceId` is left empty, and how a space reads before its first note (default-space.ts). */
  spaces: DefaultSpaces;
  /**
   * The project's checkout on this machine, for anchors (core/anchors/): the one of the folder the call's project
   * was read from (its `project` argument, the client's roots), else the server's folder's; none over HTTP.
   */
  checkout?(folder?: string): Promise<Checkout | undefined>;
  /** The client reaches this server over the network (HTTP): what needs fixing is for whoever runs it (server.ts `remote`). */
  remote?: boolean;
  /**
   * The client takes a task for this call (2026-07-28's tasks extension, declared on the request, and a
   * tool with a `task`): long work is started as its background job and answered as a task (tasks.ts).
   */
  asTask?: boolean;
  /** Who consolidates for this caller (live-mem's model or the agent itself) and whether bank_consolidate is offered to it; default: the core's. */
  consolidation?: BacklogReach;
}

/**
 * A tool is data: name, description for the model, schemas, annotations and a handler that calls
 * the core. The server registers the list; docs/tools.md's tool table is checked against it.
 */
export interface ToolDefinition<Input extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: Input;
  /** The success shape; error results carry `status` and `message` instead (and `isError`). */
  output: z.ZodObject;
  annotations: ToolAnnotations;
  /** The permission the tool needs (seed 004's matrix), for the docs; the core enforces it. */
  permission: 'read' | 'write' | 'admin' | 'public';
  handler(args: z.infer<z.ZodObject<Input>>, context: ToolContext): Promise<Record<string, unknown>>;
  /**
   * For a tool whose work asks the client's model over several rounds of one call (2026-07-28,
   * model-rounds.ts): what the rounds did together, from what the earlier ones did and the next one's
   * result. Without it the call answers what its last round did.
   */
  rounds?(earlier: Record<string, unknown>, later: Record<string, unknown>): Record<string, unknown>;
  /** For a tool whose work may run as a background job: how that job is followed, as an MCP task (tasks.ts). */
  task?: ToolTask;
}

/** Where a tool's background jobs are read (a task's state: tasks.ts): the core's job service of that kind. */
export interface ToolTask {
  jobs(core: Core): {
    status(caller: Caller, input: { space_id: string; job_id: string }): Promise<{ jobs: ReadonlyArray<JobRecord<unknown, unknown> | null> }>;
  };
}

/**
 * A tool that works in a project's space (its space_id is `projectSpaceId`) also takes `project`,
 * added here for every such tool: the handler never sees it (runTool resolves it into space_id).
 */
export function defineTool<Input extends z.ZodRawShape>(definition: ToolDefinition<Input>): ToolDefinition {
  const tool = definition as unknown as ToolDefinition;
  if (tool.input.space_id !== projectSpaceId) return tool;
  const { space_id, ...rest } = tool.input;
  return { ...tool, input: { space_id, project: projectArgument, ...rest } };
}

/** destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP spec), so they are left out. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

/**
 * A tool that writes without destroying anything: creates, appends or updates. The hints left out
 * keep the spec's defaults (idempotentHint false); destructiveHint must be said, its default is true.
 */
export const WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

/**
 * A call's arguments checked against the tool's input schema, its defaults filled in: by both call
 * paths (server.ts, call.ts) before the handler runs, so that a refused argument (a category none
 * of the seven, a string for a number) is an invalid_input result with its status and hint, like
 * any other refusal. The SDK's own check would answer with a bare text and no structuredContent.
 */
/**
 * Each tool's input schema, built once: zod compiles a schema on its first parses, and a schema built
 * per call would pay that on every call (about a tenth of a millisecond on a note).
 */
const inputSchemas = new WeakMap<ToolDefinition, z.ZodType<Record<string, unknown>>>();
function inputSchemaOf(tool: ToolDefinition): z.ZodType<Record<string, unknown>> {
  let schema = inputSchemas.get(tool);
  if (!schema) {
    schema = z.object(tool.input) as unknown as z.ZodType<Record<string, unknown>>;
    inputSchemas.set(tool, schema);
  }
  return schema;
}

export function parseArguments(tool: ToolDefinition, args: unknown): Record<string, unknown> {
  const parsed = inputSchemaOf(tool).safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => (issue.path.length > 0 ? `${issue.message} at ${issue.path.join('.')}` : issue.message));
  throw invalid(`invalid arguments for ${tool.name}: ${issues.join('; ')}`);
}

/**
 * Runs a tool on a call's arguments, as every call path does (server.ts, call.ts): the arguments
 * checked and defaulted, then, for a tool whose space_id is `projectSpaceId`, that space_id left
 * empty filled with the space of the call's `project`, else the connection's default space
 * (refused when there is none). A write that made the space says which rule chose it
 * (`space_source`). A read of the caller's own default space before its first note answers as
 * that space will once the note creates it: empty, and saying so (`space_exists: false`); a space
 * named by mistake keeps its `not_found`.
 */
export async function runTool(tool: ToolDefinition, args: unknown, context: ToolContext): Promise<Record<string, unknown>> {
  const parsed = parseArguments(tool, args);
  if (tool.input.space_id !== projectSpaceId) return tool.handler(parsed as never, context);
  const { project = '', space_id: given = '', ...rest } = parsed as { project?: string; space_id?: string };
  const resolve = () => context.spaces.resolve(context.caller, project);
  const chosen = given === '' ? await resolve() : undefined;
  if (chosen?.source === 'none') throw noDefaultSpace('project or space_id', chosen);
  const spaceId = chosen ? chosen.space_id : given;
  const input = { ...rest, space_id: spaceId } as never;
  // The code of a project read from a folder (its argument, the client's roots) is that folder's checkout.
  const { checkout } = context;
  const call = chosen?.folder && checkout ? { ...context, checkout: () => checkout(chosen.folder) } : context;
  try {
    const result = await tool.handler(input, call);
    if (result.space_created !== true) return result;
    if (chosen?.project !== undefined) await recordProject(context, spaceId, chosen.project);
    return { ...result, ...sourceOf(chosen) };
  } catch (error) {
    const missing = isLiveMemError(error) ? situationOf(error.code, error.message) : undefined;
    if (!tool.annotations.readOnlyHint || missing?.situation !== 'space_missing' || missing.about.space !== spaceId) throw error;
    const own = chosen ?? (await resolve());
    // Only where a note would create it: otherwise "empty until the first note" would not be true.
    if (own.space_id !== spaceId || !context.core.notes.createsSpaces(context.caller)) throw error;
    const core = await context.spaces.asCreated(spaceId, context.caller);
    return {
      ...(await tool.handler(input, { ...call, core })),
      space_exists: false,
      message: `space '${spaceId}' does not exist yet: it is empty until the first note written to it creates it`,
    };
  }
}

/**
 * A project's space made by its first note records the project (space-meta.ts `project`). After the
 * note, not in it: the note service knows no project. A failure costs the record only (the space is
 * the project's by its id all the same), so it is logged, not the note's failure.
 */
async function recordProject(context: ToolContext, spaceId: string, project: string): Promise<void> {
  try {
    await context.core.spaces.bindProject(context.caller, { space_id: spaceId, project });
  } catch (error) {
    context.core.context.logger.warn(
      `space '${spaceId}' was made for ${project} but does not record it: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** Which rule chose the space of a call: its own space_id, or the default's rule. */
function sourceOf(chosen: DefaultSpace | undefined): { space_source: string; space_source_detail: string } {
  return chosen ? { space_source: chosen.source, space_source_detail: chosen.detail } : { space_source: 'space_id', space_source_detail: 'named by the call' };
}
