import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller } from '../core/caller.js';
import type { ProgressEvent } from '../core/consolidation/consolidation-service.js';
import type { Core } from '../core/core.js';
import type { LlmClient } from '../llm/types.js';
import { invalid } from '../shared/errors.js';
import { projectSpaceId } from './schemas.js';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a tool's handler gets: the core, who is calling, and the MCP request context. */
export interface ToolContext {
  core: Core;
  caller: Caller;
  extra: ToolExtra;
  /** The connected client's model through MCP sampling, when it offers sampling; else undefined. */
  clientModel(): LlmClient | undefined;
  /** Sends an MCP progress notification when the request asked for progress. */
  reportProgress(event: ProgressEvent): void;
  /** The tools this server offers: a profile name (or `custom`) and how many. */
  tools: { profile: string; count: number };
  /** The space used when a tool's `projectSpaceId` is left empty (LIVE_MEM_SPACE or the project's folder). */
  defaultSpace: string | undefined;
}

/**
 * A tool is data: name, description for the model, schemas, annotations and a handler that calls
 * the core. The server registers the list; README's tool table is generated from it.
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
}

export function defineTool<Input extends z.ZodRawShape>(definition: ToolDefinition<Input>): ToolDefinition {
  return definition as unknown as ToolDefinition;
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
 * The arguments with the default space filled in, for the tools whose space_id is `projectSpaceId`
 * (never an admin or destructive tool): called by every call path before the handler runs.
 */
export function withDefaultSpace<T extends Record<string, unknown>>(tool: ToolDefinition, args: T, defaultSpace: string | undefined): T {
  if (tool.input.space_id !== projectSpaceId || args.space_id !== '') return args;
  if (defaultSpace === undefined) throw invalid('space_id is required here: this server has no default space (LIVE_MEM_SPACE)');
  return { ...args, space_id: defaultSpace };
}
