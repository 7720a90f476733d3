import { z } from 'zod';
import { CATEGORIES, unknownCategory } from '../core/validate.js';

/**
 * Schema pieces shared by the tools. Every agent pays for tools/list on every conversation, so the
 * schemas say what a model or a client needs and no more: input descriptions give allowed values,
 * units and non-obvious defaults; output schemas name the fields a client reads, without
 * descriptions unless a field is ambiguous, and stay open (results carry more than they declare).
 */
export const str = z.string();
export const int = z.number().int();
export const bool = z.boolean();
/** An object whose fields are not spelled out in the schema. */
export const obj = z.looseObject({});

/**
 * A tool's output schema. A result is either the tool's success shape or an error, and both travel
 * as structuredContent, so every success field is optional here. `status` is ok, created or deleted
 * on success, partial when a consolidation kept part of its work, else the kind of error (error,
 * not_found, already_exists, forbidden, conflict) with `message`, `hint` and `code` beside it.
 */
export function outputShape(success: z.ZodRawShape): z.ZodObject {
  const shape: Record<string, z.ZodType> = { status: str };
  for (const [key, schema] of Object.entries(success)) shape[key] = (schema as z.ZodType).optional();
  return z.looseObject(shape);
}

/** A space_id an admin or destructive tool must be given: never the default space. */
export const spaceId = z.string().describe('see space_list');

/**
 * The space_id of a tool an agent may call without knowing space ids (notes, reads, search,
 * context, bank reads, consolidation): empty or omitted, the space of the call's `project`, else
 * the server's default space (`runTool` in tool.ts, the one place it is resolved). Admin and
 * destructive tools keep `spaceId`. Described in a word, as is `project`: every agent pays for
 * tools/list on every conversation, and the instructions say how the two are used.
 */
export const projectSpaceId = z
  .string()
  .optional()
  .transform((id) => id ?? '')
  .describe('see space_list');

/**
 * The project a call works in, which every tool with `projectSpaceId` takes (`defineTool` adds it):
 * the agent's workspace folder or its git remote, used when no space_id is given or pinned
 * (mcp/default-space.ts).
 */
export const projectArgument = z.string().optional().describe('folder or git remote');

/**
 * A note's category: one of the core's CATEGORIES, refused with the core's own message (the SDK
 * checks arguments before the handler, so this is what a caller sees first).
 */
export const category = z.enum(CATEGORIES, { error: (issue) => unknownCategory(issue.input) }).describe('the kind of note');

/** A filter on notes' category: '' (the original server's "no filter", kept) or one of CATEGORIES. */
export const categoryFilter = z
  .enum(['', ...CATEGORIES], { error: (issue) => unknownCategory(issue.input) })
  .default('')
  .describe('empty = all');

/** What a destructive tool needs to act; without it the tool refuses and changes nothing. */
export const confirm = z.boolean().default(false).describe('true only if the user asked for it');

/** A correction's `secret` (core/revision): the removed lines are kept out of history too. */
export const secretFlag = z.boolean().default(false).describe('what this removes was a secret: history keeps the old text without it');

export const note = z.looseObject({ filename: str, timestamp: str, agent: str, category: str, tags: z.array(str), content: str });

export const notesResult = { notes: z.array(note), total: int, has_more: bool };

export const bankFile = z.looseObject({ filename: str, content: str });

export const bankReadAllResult = { files: z.array(bankFile), truncated: bool, omitted_files: z.array(str) };
